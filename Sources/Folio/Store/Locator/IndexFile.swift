internal import Foundation

/// `.folio/index/<collection>`: which ids each partition file of a partitioned collection held,
/// with the file's identity when it was read.
///
/// It lets `get(_:id:)` and upserts of new ids skip reading every partition file of a large
/// collection: a partition whose file still has the recorded identity is not read. It is derived
/// data, never authoritative: an entry whose file changed is ignored (the file is read instead),
/// and a missing or damaged index is rebuilt.
///
/// ```
/// folio-index 1
/// P 2026-11-22 <device> <inode> <size> <modified ns> <changed ns> <count>
/// <id>
/// …
/// ```
enum IndexFile {
    struct Entry: Equatable {
        var identity: FileIdentity
        var ids: [String]
    }

    static let header = "folio-index 1"

    static func path(_ collection: String) -> String { StoreLayout.machinery + "/index/" + collection }

    /// The entries, or none when the file is missing or not in this form.
    /// - Throws: ``FolioError`` when the file is there but cannot be read (``entries(_:collection:)``).
    static func read(_ fileSystem: FileSystem, collection: String) throws(FolioError) -> [PartitionKey: Entry] {
        let (bytes, lines) = try entries(fileSystem, collection: collection)
        return lines.mapValues { identity, ids in Entry(identity: identity, ids: ids.map { String(decoding: bytes[$0], as: UTF8.self) }) }
    }

    /// Goes through an index file's bytes: each partition's line and the byte ranges of its ids,
    /// in the file's order.
    /// - Returns: Whether the bytes are an index in this form, to their end (a file cut short,
    ///   with a line in no form, or naming a partition twice is not used at all).
    static func walk(_ buffer: UnsafeBufferPointer<UInt8>, _ visit: (SavedPartitionLine, [Range<Int>]) -> Void) -> Bool {
        var position = 0
        func line() -> Range<Int>? { buffer.line(from: &position) }
        guard let first = line(), buffer[first].elementsEqual(header.utf8) else { return false }
        var seen: Set<PartitionKey> = []
        var ids: [Range<Int>] = []
        while let range = line() {
            if range.isEmpty, position >= buffer.count { break }   // the final newline
            guard let partition = SavedPartitionLine(UnsafeBufferPointer(rebasing: buffer[range]), flagged: false),
                seen.insert(partition.key).inserted
            else { return false }
            ids.removeAll(keepingCapacity: true)
            for _ in 0..<partition.count {
                guard let id = line() else { return false }
                ids.append(id)
            }
            visit(partition, ids)
        }
        return true
    }

    /// The file's bytes and, per partition, its entry's identity and the byte ranges of its id
    /// lines in them; none when the file is missing or not in this form (the id index's build).
    /// - Throws: ``FolioError`` when the file is there but cannot be read (a folder in its place,
    ///   a failing disk): derived data, so callers report it and read the partition files instead.
    static func entries(_ fileSystem: FileSystem, collection: String) throws(FolioError) -> (
        bytes: [UInt8], lines: [PartitionKey: (FileIdentity, [Range<Int>])]
    ) {
        guard let (bytes, _) = try fileSystem.read(path(collection)) else { return ([], [:]) }
        var lines: [PartitionKey: (FileIdentity, [Range<Int>])] = [:]
        let whole = bytes.withUnsafeBufferPointer { buffer in walk(buffer) { partition, ids in lines[partition.key] = (partition.identity, ids) } }
        return whole ? (bytes, lines) : ([], [:])
    }

    /// A partition's ids, as a save writes them: a list, or its entry's lines in the file the
    /// id index was built from (``SavedIDTable``).
    enum IDs {
        case listed([String])
        case lines(SavedIDTable)
    }

    /// Replaces the index with `entries`, in key order, each entry's ids in the order given.
    static func write(_ fileSystem: FileSystem, collection: String, entries: [PartitionKey: (identity: FileIdentity, ids: IDs)]) throws(FolioError) {
        var bytes = Array((header + "\n").utf8)
        bytes.reserveCapacity(
            entries.reduce(64) { total, entry in
                switch entry.value.ids {
                case .listed(let ids): total + 64 + ids.count * 40
                case .lines(let table): total + 64 + table.count(at: entry.key) * 40
                }
            })
        for key in entries.keys.sorted() {
            let (identity, ids) = entries[key]!
            switch ids {
            case .listed(let ids):
                SavedPartitionLine(key: key, identity: identity, count: ids.count).append(to: &bytes)
                for id in ids {
                    bytes.append(contentsOf: id.utf8)
                    bytes.append(0x0A)
                }
            case .lines(let table):
                SavedPartitionLine(key: key, identity: identity, count: table.count(at: key)).append(to: &bytes)
                table.appendLines(at: key, to: &bytes)
            }
        }
        try fileSystem.makeDirectoryDurably(StoreLayout.machinery + "/index")
        try AtomicFile(fileSystem: fileSystem).replace(path(collection), with: bytes)
    }

    /// `ids` in the order of their bytes (as JSON keys are written): by their first eight bytes
    /// as one number, and only where those are equal by the rest (a thirty-year index sorts
    /// three hundred thousand ids when it is written whole).
    static func sortedInKeyOrder(_ ids: [String]) -> [String] {
        func prefix(_ id: String) -> UInt64 {
            var value: UInt64 = 0, count = 0
            for byte in id.utf8.prefix(8) {
                value = value << 8 | UInt64(byte)
                count += 1
            }
            return count == 8 ? value : value << UInt64(8 * (8 - count))
        }
        return ids.map { (prefix($0), $0) }.sorted { a, b in a.0 != b.0 ? a.0 < b.0 : a.1.precedesInKeyOrder(b.1) }.map(\.1)
    }
}

extension IndexFile {
    /// How many of a collection's `files` the saved index may describe out of date (changed, new,
    /// or not listed) and still answer a look-up, those files then read: 1 in 32, from 8 to 64. A
    /// save is left for later until more of its entries than this are out of date
    /// (IdLocator+IndexFile.swift), so that a checkpoint of a few partitions does not write years
    /// of ids again.
    static func staleEntriesTolerated(files: Int) -> Int { max(8, min(64, files / 32)) }

    /// What the saved index says about one id.
    enum LookUp: Equatable {
        /// The index lists every file unchanged, and `id` is in this one only.
        case at(PartitionKey)
        /// The index lists every file unchanged, and none holds `id`.
        case absent
        /// The index lists the other files unchanged, `found` holds the ones of them that hold
        /// `id`; `toRead` are the files it does not describe as they are (at most
        /// ``staleEntriesTolerated(files:)``), to read for the answer.
        case unless(toRead: [PartitionAddress], found: [PartitionKey])
        /// The index cannot answer (missing, damaged, too far out of date, or `id` in two files):
        /// build it.
        case unknown
    }

    /// Where `id` is, from the saved index without building it: one pass over its lines and one
    /// `stat` of every partition file, where building it makes a table of every id. An entry
    /// counts only for a file in `files` with the identity it has now; the files without one are
    /// ``LookUp/unless(toRead:found:)``'s to read, so that the answer says what reading every
    /// file would say, an id in two files included (``LookUp/unknown``, and the full index then
    /// reports it).
    static func lookUp(_ fileSystem: FileSystem, collection: String, id: String, files: [PartitionAddress]) throws(FolioError) -> LookUp {
        guard let (bytes, _) = try fileSystem.read(path(collection)) else { return .unknown }
        let target = Array(id.utf8)
        var found: Set<PartitionKey> = []
        var listed: [PartitionKey: FileIdentity] = [:]
        let parsed = bytes.withUnsafeBufferPointer { buffer in
            walk(buffer) { partition, ids in
                listed[partition.key] = partition.identity
                for range in ids where range.count == target.count && buffer[range].elementsEqual(target) { found.insert(partition.key) }
            }
        }
        guard parsed else { return .unknown }
        // One `stat` per file, on several threads: on cold inodes each waits for the disk.
        let current = parallelMap(files, width: StoreEngine.scanWidth) { file in
            Result { () throws(FolioError) -> FileIdentity? in try fileSystem.identity(file.path) }
        }
        var toRead: [PartitionAddress] = []
        var holders: [PartitionKey] = []
        for (file, identity) in zip(files, current) {
            if let listed = listed[file.key], try identity.get() == listed {
                if found.contains(file.key) { holders.append(file.key) }
            } else {
                toRead.append(file)
                guard toRead.count <= staleEntriesTolerated(files: files.count) else { return .unknown }
            }
        }
        // An entry whose file is gone says nothing: the id is in a file of `files` or nowhere.
        guard toRead.isEmpty else { return holders.count > 1 ? .unknown : .unless(toRead: toRead, found: holders) }
        switch holders.count {
        case 0: return .absent
        case 1: return .at(holders[0])
        default: return .unknown
        }
    }
}

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
    static func read(_ fileSystem: FileSystem, collection: String) -> [PartitionKey: Entry] {
        let bytes: [UInt8]
        do {
            guard let (contents, _) = try fileSystem.read(path(collection)) else { return [:] }
            bytes = contents
        } catch {
            return [:]
        }
        let lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
        guard lines.first == header else { return [:] }
        var entries: [PartitionKey: Entry] = [:]
        var index = 1
        while index < lines.count, lines[index].hasPrefix("P ") {
            guard let (key, identity, count) = partitionLine(lines[index]), index + count < lines.count, entries[key] == nil else { return [:] }
            entries[key] = Entry(identity: identity, ids: Array(lines[(index + 1)...(index + count)]))
            index += count + 1
        }
        return entries
    }

    /// A `P <key> <device> <inode> <size> <modified> <changed> <count>` line.
    static func partitionLine(_ line: String) -> (key: PartitionKey, identity: FileIdentity, count: Int)? {
        let fields = line.split(separator: " ")
        guard fields.count == 8, fields[0] == "P",
            let key = PartitionKey.day(parsing: String(fields[1])) ?? PartitionKey.month(parsing: String(fields[1])),
            let device = UInt64(fields[2]), let inode = UInt64(fields[3]), let size = Int64(fields[4]),
            let modified = Int64(fields[5]), let changed = Int64(fields[6]), let count = Int(fields[7]), count >= 0
        else { return nil }
        return (key, FileIdentity(device: device, inode: inode, size: size, modified: modified, changed: changed, isDirectory: false), count)
    }

    static func write(_ fileSystem: FileSystem, collection: String, entries: [PartitionKey: Entry]) throws(FolioError) {
        var text = header + "\n"
        for key in entries.keys.sorted() {
            let entry = entries[key]!
            let identity = entry.identity
            text += "P \(key.text) \(identity.device) \(identity.inode) \(identity.size) \(identity.modified) \(identity.changed) \(entry.ids.count)\n"
            for id in entry.ids.sorted(by: { $0.precedesInKeyOrder($1) }) { text += id + "\n" }
        }
        try fileSystem.makeDirectoryDurably(StoreLayout.machinery + "/index")
        try AtomicFile(fileSystem: fileSystem).replace(path(collection), with: Array(text.utf8))
    }
}

extension IndexFile {
    /// What the saved index alone says about one id.
    enum LookUp: Equatable {
        /// The index names exactly these files, all unchanged, and `id` is in this one only.
        case at(PartitionKey)
        /// The index names exactly these files, all unchanged, and none holds `id`.
        case absent
        /// The index cannot answer (missing, damaged, out of date, or `id` in two files): build it.
        case unknown
    }

    /// Where `id` is, from the saved index without building it: one pass over its lines and one
    /// `stat` of every partition file, where building it makes a table of every id. The answer
    /// holds only when the index lists exactly the files in `files`, each with the identity it
    /// has now, so it says what reading every file would say, an id in two files included
    /// (``LookUp/unknown``, and the full index then reports it).
    static func lookUp(_ fileSystem: FileSystem, collection: String, id: String, files: [PartitionAddress]) throws(FolioError) -> LookUp {
        guard let (bytes, _) = try fileSystem.read(path(collection)) else { return .unknown }
        let target = Array(id.utf8)
        var found: [PartitionKey] = []
        var listed: [PartitionKey: FileIdentity] = [:]
        let parsed: Bool = bytes.withUnsafeBufferPointer { buffer in
            var position = 0
            func line() -> Range<Int>? {
                guard position < buffer.count else { return nil }
                var end = position
                while end < buffer.count, buffer[end] != 0x0A { end += 1 }
                defer { position = end + 1 }
                return position..<end
            }
            guard let first = line(), buffer[first].elementsEqual(header.utf8) else { return false }
            while let range = line() {
                if range.isEmpty, position >= buffer.count { break }   // the final newline
                guard let (key, identity, count) = partitionLine(String(decoding: buffer[range], as: UTF8.self)), listed[key] == nil
                else { return false }
                listed[key] = identity
                for _ in 0..<count {
                    guard let idLine = line() else { return false }
                    if idLine.count == target.count, buffer[idLine].elementsEqual(target) { found.append(key) }
                }
            }
            return true
        }
        guard parsed, listed.count == files.count, files.allSatisfy({ listed[$0.key] != nil }) else { return .unknown }
        // One `stat` per file, on several threads: on cold inodes each waits for the disk.
        let current = parallelMap(files, width: StoreEngine.scanWidth) { file in
            Result { () throws(FolioError) -> FileIdentity? in try fileSystem.identity(file.path) }
        }
        for (file, identity) in zip(files, current) {
            guard try identity.get() == listed[file.key] else { return .unknown }
        }
        switch found.count {
        case 0: return .absent
        case 1: return .at(found[0])
        default: return .unknown
        }
    }
}

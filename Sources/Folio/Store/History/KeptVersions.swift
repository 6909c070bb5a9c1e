internal import Foundation

/// The history of each data file, under `.folio/versions/` (FORMAT.md, "`.folio/versions/`"): the
/// revisions Folio wrote (and merges it made), the unedited revisions of other copies it read, and
/// the saves people made, so that a save is merged against exactly the revision it was made from.
///
/// `.folio/versions/<path of the file>/<order>-<hash>[-<writer>.<number>].json` for a revision,
/// `….edit.json` for a save a person made (of the revision it names): `order` (20 digits) grows with
/// every version kept, `hash` is the ``ContentHash`` of the bytes, which are exactly the file's.
/// Versions are kept for ``retention`` and within ``byteLimit`` bytes per file; Folio's newest
/// always stays. They are written by temp file and rename, without fsync of their own (the version
/// of a file a checkpoint is about to replace is made durable by the checkpoint's barrier, before
/// the replace): a version damaged by a power cut fails its hash and is ignored.
///
/// Checkpoints keep versions under the writers' lock; a read that takes in a person's save (or a
/// first look at another copy's revision) keeps it without the lock. Reading needs no lock: a
/// version is complete or absent. Two processes keeping different versions of one file at the same
/// instant may both take the same `order` (their names differ by hash); nothing orders the two.
struct KeptVersions {
    static let folder = StoreLayout.machinery + "/versions"
    static let defaultRetention: Duration = .seconds(30 * 24 * 3600)
    static let defaultByteLimit = 64 << 20
    /// Every this many versions kept of a file, the sizes of all are added up against the limit.
    static let byteCheckInterval: UInt64 = 16

    let fileSystem: FileSystem
    var retention: Duration = defaultRetention
    var byteLimit: Int = defaultByteLimit

    struct Version {
        var order: UInt64
        var hash: ContentHash
        var name: String
        /// Saved by a person (not written by Folio).
        var isEdit: Bool
        /// The revision the version's content names (its own, or, for an edit, the one it was
        /// made from); nil for content without one.
        var writer: String?
        var number: UInt64 = 0

        func isRevision(_ writer: String, _ number: UInt64) -> Bool { self.writer == writer && self.number == number }
    }

    /// The folder holding one file's versions.
    static func folder(of path: String) -> String { folder + "/" + path }

    /// A version's name: nil when `name` is no version's.
    static func parse(_ name: String) -> Version? {
        guard name.hasSuffix(".json") else { return nil }
        let isEdit = name.hasSuffix(".edit.json")
        let stem = name.dropLast(isEdit ? 10 : 5)
        let utf8 = Array(stem.utf8)
        guard utf8.count >= 37, utf8[20] == UInt8(ascii: "-"),
            let order = UInt64(String(decoding: utf8[0..<20], as: UTF8.self)),
            let hash = ContentHash(hex: Substring(String(decoding: utf8[21..<37], as: UTF8.self)))
        else { return nil }
        var version = Version(order: order, hash: hash, name: name, isEdit: isEdit)
        if utf8.count > 37 {
            guard utf8[37] == UInt8(ascii: "-") else { return nil }
            let revision = String(decoding: utf8[38...], as: UTF8.self)
            guard let dot = revision.lastIndex(of: "."), let number = UInt64(revision[revision.index(after: dot)...]) else { return nil }
            version.writer = String(revision[..<dot])
            version.number = number
        }
        return version
    }

    /// The versions kept of a file, oldest first (names that are not versions are ignored).
    func versions(of path: String) throws(FolioError) -> [Version] {
        try fileSystem.list(Self.folder(of: path)).filter { !$0.isDirectory }.compactMap { Self.parse($0.name) }
            .sorted { $0.order < $1.order }
    }

    /// A version's bytes, or nil when it is gone or damaged (its bytes do not match its hash).
    func bytes(of version: Version, path: String) throws(FolioError) -> [UInt8]? {
        guard let (bytes, _) = try fileSystem.read(Self.folder(of: path) + "/" + version.name),
            ContentHash(bytes) == version.hash
        else { return nil }
        return bytes
    }

    /// The next number of `writer`'s revisions of a file: past every one kept and past `known`.
    static func nextNumber(of writer: String, in versions: [Version], after known: UInt64) -> UInt64 {
        versions.reduce(known) { $1.writer == writer ? max($0, $1.number) : $0 } + 1
    }

    /// Keeps `bytes` as the newest version of `path`, then lets the versions older than the
    /// retention period go (and the oldest beyond the byte limit). A person's save (`edit`)
    /// already kept, under either kind, is not kept again.
    /// - Parameters:
    ///   - revision: The revision the bytes name (for an edit: the one it was made from).
    ///   - barrier: Durable once this barrier is flushed (file and folder): Folio's version of a
    ///     file about to be replaced must survive a power cut that the new file survives, or the
    ///     file would read as a person's save. The caller flushes it before it replaces the file.
    ///     Nil: not synced.
    /// - Returns: How many versions went for the byte limit (younger than the retention period).
    @discardableResult
    ///   - listed: The file's versions when the caller just listed them (saves a second listing).
    func keep(
        _ bytes: [UInt8], of path: String, revision: Revision?, edit: Bool = false, barrier: DurabilityBarrier? = nil,
        listed: [Version]? = nil
    ) throws(FolioError) -> Int {
        let hash = ContentHash(bytes)
        var versions: [Version]
        if let listed { versions = listed } else { versions = try self.versions(of: path) }
        if let newest = versions.last, newest.hash == hash, newest.isEdit == edit { return 0 }
        if edit, versions.contains(where: { $0.hash == hash }) { return 0 }
        let folder = Self.folder(of: path)
        if let barrier { try barrier.makeDirectory(folder) } else { try fileSystem.makeDirectoryDurably(folder) }
        // Written to a temp file and renamed, so a kill never leaves half a version; another
        // process may keep one under the same number at the same instant: take the next then.
        let temp = StoreLayout.tempFolder + "/" + AtomicFile.counter.nextName(for: "version")
        _ = try fileSystem.writeNewFile(temp, bytes, sync: barrier?.fileSync ?? .none, for: folder)
        var order = (versions.last?.order ?? 0) + 1
        var placed = false
        let suffix = (revision.map { "-\($0.writer).\($0.number)" } ?? "") + (edit ? ".edit.json" : ".json")
        for _ in 0..<4 where !placed {
            let name = String(order).leftPadded(to: 20) + "-\(hash)" + suffix
            switch try fileSystem.renameNoReplace(temp, to: folder + "/" + name) {
            case true?: placed = true
            case false?: order += 1
            case nil:
                try fileSystem.rename(temp, to: folder + "/" + name)
                placed = true
            }
        }
        if !placed {
            _ = Platform.unlink(fileSystem.absolute(temp))
            return 0
        }
        barrier?.noteFolder(folder)
        // The same bytes kept before are this version now (an older name would be its base too),
        // unless the older name is another writer's: another copy's revision, kept as read, then
        // kept as Folio's when the file is left as it is (an adopted save), must stay findable by
        // its own name, or a later file naming it would be merged against an older base.
        versions.removeAll { version in
            guard version.hash == hash else { return false }
            if let writer = version.writer, let own = revision?.writer, writer != own { return false }
            _ = Platform.unlink(fileSystem.absolute(folder + "/" + version.name))
            return true
        }
        return try prune(versions, of: path, newestOrder: order)
    }

    /// Lets the versions older than the retention period go, oldest first, and every
    /// ``byteCheckInterval`` versions the oldest beyond the byte limit. Folio's newest version
    /// (the one just kept, or the newest of Folio's when an edit was kept) always stays.
    private func prune(_ older: [Version], of path: String, newestOrder: UInt64) throws(FolioError) -> Int {
        let folder = Self.folder(of: path)
        let keptFolios = older.last { !$0.isEdit }?.name
        var remaining = older.filter { $0.name != keptFolios }
        let cutoff = FileIdentity.now - Int64(retention.components.seconds) * 1_000_000_000
        while let oldest = remaining.first {
            if let identity = try fileSystem.identity(folder + "/" + oldest.name) {
                guard identity.modified < cutoff else { break }
                try fileSystem.unlink(folder + "/" + oldest.name)
            }
            remaining.removeFirst()
        }
        guard newestOrder % Self.byteCheckInterval == 0 else { return 0 }
        var sizes: [(Version, Int64)] = []
        var total: Int64 = 0
        for entry in try fileSystem.list(folder) where !entry.isDirectory {
            guard let version = Self.parse(entry.name), let identity = try fileSystem.identity(folder + "/" + entry.name) else { continue }
            total += identity.size
            if remaining.contains(where: { $0.name == version.name }) { sizes.append((version, identity.size)) }
        }
        var young = 0
        for (version, size) in sizes.sorted(by: { $0.0.order < $1.0.order }) where total > Int64(byteLimit) {
            try fileSystem.unlink(folder + "/" + version.name)
            total -= size
            young += 1
        }
        return young
    }

    /// Whether a version holds no entities (the removal of its file).
    func isRemoval(_ version: Version, path: String) throws(FolioError) -> Bool {
        guard let bytes = try bytes(of: version, path: path) else { return false }
        do { return try PartitionFile.decode(bytes, path: path).entities.isEmpty } catch { return false }
    }
}

/// Where each id of a partitioned collection lives: the id index, built on first need (from
/// `.folio/index/`, IndexFile.swift, where the files are unchanged; else by reading them), kept
/// current as records are applied and files reloaded, and saved after checkpoints.
///
/// Besides the ids' partitions it keeps what saving and trusting the index needs: the identity
/// of each file whose ids came from `.folio/index/` or left memory, the files that could not be
/// read (their ids are unknown), and the ids found in more than one file (IdLocator+Duplicates.swift).
/// Reading files is the store's business; the index only records what the store found.
final class IdIndex {
    /// Per built collection, where ids are on top of `saved`'s table: an id set in a partition, or
    /// `nil` for one removed. Holds every id of a collection built by reading its files.
    private var locations: [String: [String: PartitionKey?]] = [:]
    /// Per collection, identities of the partition files whose ids were not read from them now
    /// (from `.folio/index/`, or the file left memory).
    private var fileIdentities: [String: [PartitionKey: FileIdentity]] = [:]
    /// Per collection being built or built, partition files that could not be read, with why.
    private var unreadable: [String: [PartitionAddress: FolioError]] = [:]
    /// Per collection, ids found in more than one partition file, with those files' keys.
    private var copies: [String: [String: Set<PartitionKey>]] = [:]
    /// Collections whose index changed since it was last saved.
    private(set) var changed: Set<String> = []
    /// Per built collection, what `.folio/index/` listed of the files that were unchanged when the
    /// index was built from it (nil when built from the files alone).
    private var tables: [String: SavedIDTable] = [:]
    /// Per built collection, the partitions a save wrote since the index was built, with the ids it
    /// wrote (none: it wrote no entry): for these, what `tables` lists no longer counts.
    private var saved: [String: [PartitionKey: [String]]] = [:]
    /// Per built collection, the partitions whose ids may differ from what was last saved, with the
    /// ids placed in them since. Every change of `locations` goes through ``place(_:at:in:)`` and
    /// ``remove(_:from:)``, which keep it: a save then gathers the ids of these partitions only.
    private var placedSinceSaved: [String: [PartitionKey: [String]]] = [:]
    /// Per built collection, the identity of each file `.folio/index/` lists, as it lists it (the
    /// file read at the build, or the last save).
    private(set) var savedIdentities: [String: [PartitionKey: FileIdentity]] = [:]

    // MARK: Ids

    /// Whether the collection's index is built.
    func isBuilt(_ collection: String) -> Bool {
        locations[collection] != nil
    }

    /// The key of the partition that holds `id`, as far as the index knows.
    func key(of id: String, in collection: String) -> PartitionKey? {
        locations(in: collection)?.key(of: id)
    }

    /// Where a built collection's ids are now, as a value that later changes leave as it is.
    struct Locations {
        fileprivate let changes: [String: PartitionKey?]
        fileprivate let table: SavedIDTable?

        /// The key of the partition that holds `id`.
        func key(of id: String) -> PartitionKey? {
            if let change = changes[id] { return change }
            return table?.key(of: id)
        }
    }

    /// Where a built collection's ids are now (nil if not built).
    func locations(in collection: String) -> Locations? {
        locations[collection].map { Locations(changes: $0, table: tables[collection]) }
    }

    /// Starts building a collection's index: no file is known unreadable, no identity known.
    func beginBuilding(_ collection: String) {
        unreadable[collection] = [:]
        fileIdentities[collection] = [:]
    }

    /// Makes the collection's index what `.folio/index/` listed of its unchanged files (the rest are
    /// added by ``place(_:at:in:)`` as files are read), or empty.
    /// - Parameters:
    ///   - table: The saved index's entries of the unchanged files (nil: none).
    ///   - twice: Ids the table lists in more than one entry, with those entries' partitions: they
    ///     are not placed anywhere until their files are read.
    ///   - identities: The identity of every file the saved index lists, as it lists it.
    func setBuilt(
        _ collection: String, from table: SavedIDTable?, twice: [String: [PartitionKey]] = [:], identities: [PartitionKey: FileIdentity] = [:]
    ) {
        locations[collection] = Dictionary(twice.keys.lazy.map { ($0, PartitionKey?.none) }) { first, _ in first }
        savedIdentities[collection] = identities
        tables[collection] = table
        saved[collection] = [:]
        placedSinceSaved[collection] = [:]
        for key in twice.values.joined() { noteIDsChanged(in: key, of: collection) }
    }

    /// Records that `id` lives in the partition `key` (if the collection's index is built).
    func place(_ id: String, at key: PartitionKey, in collection: String) {
        guard isBuilt(collection), case let old = self.key(of: id, in: collection), old != key else { return }
        locations[collection]?[id] = .some(key)
        if let old { noteIDsChanged(in: old, of: collection) }
        placedSinceSaved[collection, default: [:]][key, default: []].append(id)
    }

    /// Notes that the ids of a partition may differ from those saved.
    private func noteIDsChanged(in key: PartitionKey, of collection: String) {
        if placedSinceSaved[collection]?[key] == nil { placedSinceSaved[collection, default: [:]][key] = [] }
    }

    /// Forgets that `id` lives at `address`, if the index says it does.
    func remove(_ id: String, from address: PartitionAddress) {
        guard key(of: id, in: address.collection) == address.key else { return }
        locations[address.collection]?[id] = .some(nil)
        noteIDsChanged(in: address.key, of: address.collection)
    }

    /// The ids the partition `key` holds, as far as the index knows (nil if not built): those last
    /// saved there and those placed there since, that are there still.
    func ids(at key: PartitionKey, in collection: String) -> [String]? {
        guard isBuilt(collection) else { return nil }
        let before = saved[collection]?[key] ?? tables[collection]?.ids(at: key) ?? []
        var seen = Set<String>()
        return (before + (placedSinceSaved[collection]?[key] ?? [])).filter { self.key(of: $0, in: collection) == key && seen.insert($0).inserted }
    }

    /// Each partition's ids, for a save: where nothing changed since the last save, what it wrote
    /// (or the saved index's lines); elsewhere the ids there now. Nil when the collection is not
    /// built. Partitions without ids are left out.
    func idsByPartition(in collection: String) -> [PartitionKey: IndexFile.IDs]? {
        guard isBuilt(collection) else { return nil }
        var result: [PartitionKey: IndexFile.IDs] = [:]
        let placed = placedSinceSaved[collection] ?? [:], saved = saved[collection] ?? [:]
        if let table = tables[collection] {
            for key in table.keys where saved[key] == nil && placed[key] == nil && table.count(at: key) > 0 { result[key] = .lines(table) }
        }
        for (key, ids) in saved where placed[key] == nil && !ids.isEmpty { result[key] = .listed(ids) }
        for key in placed.keys {
            if let ids = ids(at: key, in: collection), !ids.isEmpty { result[key] = .listed(ids) }
        }
        return result
    }

    /// The partitions whose ids changed since the last save.
    func changedPartitions(in collection: String) -> Set<PartitionKey> {
        Set(placedSinceSaved[collection].map { Array($0.keys) } ?? [])
    }

    /// Follows a journal record's change of `id` at `address` (set there, or removed from there),
    /// if the collection's index is built.
    func apply(_ id: String, at address: PartitionAddress, exists: Bool) {
        guard isBuilt(address.collection) else { return }
        changed.insert(address.collection)
        if exists { place(id, at: address.key, in: address.collection) } else { remove(id, from: address) }
    }

    /// Forgets where ids live, which files were unreadable and their identities, for every
    /// collection: records this process never saw are now in files it may not have read, so
    /// each index is built again on demand. The ids known in two files stay known.
    func forgetLocations() {
        locations = [:]
        tables = [:]
        saved = [:]
        placedSinceSaved = [:]
        savedIdentities = [:]
        unreadable = [:]
        fileIdentities = [:]
    }

    // MARK: Files

    /// Remembers the identity of the file whose ids the index holds without holding the file.
    func remember(_ identity: FileIdentity, of key: PartitionKey, in collection: String) {
        fileIdentities[collection, default: [:]][key] = identity
    }

    /// The identity remembered for a partition file, if any.
    func identity(of key: PartitionKey, in collection: String) -> FileIdentity? {
        fileIdentities[collection]?[key]
    }

    /// Records that a file could not be read (while its collection is being built or is built).
    /// - Returns: Whether this is news (the file was not known unreadable): report it then.
    @discardableResult
    func noteUnreadable(_ address: PartitionAddress, _ error: FolioError) -> Bool {
        let known = unreadable[address.collection]?[address] != nil
        unreadable[address.collection]?[address] = error
        return !known
    }

    /// Records that a file was read (it may have been fixed).
    func noteReadable(_ address: PartitionAddress) {
        unreadable[address.collection]?[address] = nil
    }

    /// The files of a collection that could not be read, with why.
    func unreadableFiles(in collection: String) -> [PartitionAddress: FolioError] {
        unreadable[collection] ?? [:]
    }

    /// Every file known unreadable, with why.
    var allUnreadableFiles: [PartitionAddress: FolioError] {
        unreadable.values.reduce(into: [:]) { result, files in result.merge(files) { first, _ in first } }
    }

    // MARK: Ids in two files

    /// The keys of the files known to hold `id` when there are several.
    func copies(of id: String, in collection: String) -> Set<PartitionKey>? {
        copies[collection]?[id]
    }

    /// Records the files that hold `id` (nil: no longer held twice).
    func setCopies(_ keys: Set<PartitionKey>?, of id: String, in collection: String) {
        if let keys { copies[collection, default: [:]][id] = keys } else { copies[collection]?[id] = nil }
    }

    /// The ids of a collection known to be in several files.
    func copies(in collection: String) -> [String: Set<PartitionKey>]? {
        copies[collection]
    }

    // MARK: Saving

    /// Notes that a collection's index changed and should be saved.
    func markChanged(_ collection: String) {
        changed.insert(collection)
    }

    /// Whether a collection's index can be saved: built, with every file read and no id in two
    /// files (a fresh process must notice that again).
    func isSavable(_ collection: String) -> Bool {
        isBuilt(collection) && unreadable[collection]?.isEmpty ?? true && copies[collection]?.isEmpty ?? true
    }

    /// Notes that a collection's index was saved, with these ids in the partitions that had
    /// changed (``changedPartitions(in:)``; a partition left out was written without an entry),
    /// and these identities.
    func markSaved(_ collection: String, changedPartitions written: [PartitionKey: [String]], identities: [PartitionKey: FileIdentity]) {
        changed.remove(collection)
        savedIdentities[collection] = identities
        for key in changedPartitions(in: collection) { saved[collection, default: [:]][key] = written[key] ?? [] }
        placedSinceSaved[collection] = [:]
    }
}

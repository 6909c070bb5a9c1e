/// Where each id of a partitioned collection lives: the id index, built on first need (from
/// `.folio/index/`, IndexFile.swift, where the files are unchanged; else by reading them), kept
/// current as records are applied and files reloaded, and saved after checkpoints.
///
/// Besides the ids' partitions it keeps what saving and trusting the index needs: the identity
/// of each file whose ids came from `.folio/index/` or left memory, the files that could not be
/// read (their ids are unknown), and the ids found in more than one file (IdLocator+Duplicates.swift).
/// Reading files is the store's business; the index only records what the store found.
final class IdIndex {
    /// Per built collection, each id's partition key.
    private var locations: [String: [String: PartitionKey]] = [:]
    /// Per collection, identities of the partition files whose ids were not read from them now
    /// (from `.folio/index/`, or the file left memory).
    private var fileIdentities: [String: [PartitionKey: FileIdentity]] = [:]
    /// Per collection being built or built, partition files that could not be read, with why.
    private var unreadable: [String: [PartitionAddress: FolioError]] = [:]
    /// Per collection, ids found in more than one partition file, with those files' keys.
    private var copies: [String: [String: Set<PartitionKey>]] = [:]
    /// Collections whose index changed since it was last saved.
    private(set) var changed: Set<String> = []
    /// Per built collection, each partition's ids as `.folio/index/` held them when the index was
    /// built from it or last saved: a save starts from them (IdLocator+IndexFile.swift).
    private var saved: [String: [PartitionKey: [String]]] = [:]
    /// Per built collection, the partitions whose ids may differ from `saved`, with the ids placed
    /// in them since. Every change of `locations` goes through ``place(_:at:in:)`` and
    /// ``remove(_:from:)``, which keep it: a save then groups the ids of these partitions only.
    private var placedSinceSaved: [String: [PartitionKey: [String]]] = [:]

    // MARK: Ids

    /// Whether the collection's index is built.
    func isBuilt(_ collection: String) -> Bool {
        locations[collection] != nil
    }

    /// The key of the partition that holds `id`, as far as the index knows.
    func key(of id: String, in collection: String) -> PartitionKey? {
        locations[collection]?[id]
    }

    /// Every id of a built collection with its partition key (nil if not built).
    func locations(in collection: String) -> [String: PartitionKey]? {
        locations[collection]
    }

    /// Starts building a collection's index: no file is known unreadable, no identity known.
    func beginBuilding(_ collection: String) {
        unreadable[collection] = [:]
        fileIdentities[collection] = [:]
    }

    /// Sets the ids read from `.folio/index/` (the rest are added by ``place(_:at:in:)`` as files
    /// are read).
    /// - Parameters:
    ///   - saved: Each partition's ids as the file listed them, which `locations` holds, except in
    ///     the partitions of `changedKeys` (ids the file listed in two partitions, left out).
    func setLocations(
        _ locations: [String: PartitionKey], saved: [PartitionKey: [String]], changedKeys: some Sequence<PartitionKey>,
        of collection: String
    ) {
        self.locations[collection] = locations
        self.saved[collection] = saved
        placedSinceSaved[collection] = Dictionary(changedKeys.lazy.map { ($0, []) }) { first, _ in first }
    }

    /// Records that `id` lives in the partition `key` (if the collection's index is built).
    func place(_ id: String, at key: PartitionKey, in collection: String) {
        guard isBuilt(collection), case let old = locations[collection]?.updateValue(key, forKey: id), old != key else { return }
        if let old { noteIDsChanged(in: old, of: collection) }
        placedSinceSaved[collection, default: [:]][key, default: []].append(id)
    }

    /// Notes that the ids of a partition may differ from those saved.
    private func noteIDsChanged(in key: PartitionKey, of collection: String) {
        if placedSinceSaved[collection]?[key] == nil { placedSinceSaved[collection, default: [:]][key] = [] }
    }

    /// Forgets that `id` lives at `address`, if the index says it does.
    func remove(_ id: String, from address: PartitionAddress) {
        guard locations[address.collection]?[id] == address.key else { return }
        locations[address.collection]?[id] = nil
        noteIDsChanged(in: address.key, of: address.collection)
    }

    /// Each partition's ids, for a save: those the save before (or the file the index was built
    /// from) listed, and in the partitions that changed since, the ids that are there now. Nil
    /// when the collection is not built.
    func idsByPartition(in collection: String) -> (ids: [PartitionKey: [String]], changedKeys: Set<PartitionKey>)? {
        guard let locations = locations[collection] else { return nil }
        var ids = saved[collection] ?? [:]
        let placed = placedSinceSaved[collection] ?? [:]
        for (key, placedHere) in placed {
            var seen = Set<String>()
            let now = ((ids[key] ?? []) + placedHere).filter { locations[$0] == key && seen.insert($0).inserted }
            ids[key] = now.isEmpty ? nil : now
        }
        return (ids, Set(placed.keys))
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
        saved = [:]
        placedSinceSaved = [:]
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

    /// Notes that a collection's index was saved with these ids (``idsByPartition(in:)``).
    func markSaved(_ collection: String, ids: [PartitionKey: [String]]) {
        changed.remove(collection)
        saved[collection] = ids
        placedSinceSaved[collection] = [:]
    }
}

/// What a store's state is opened with and keeps for its life: who it is, who writes, how long
/// the history keeps versions, which side wins a field both a save and Folio changed, and the
/// app's hook for outside edits. Set when the store opens (the writer id once a read-write open
/// ensured it), and handed on to a state rebuilt after a failed sync.
struct StoreSettings {
    /// The store's id, from `folio.json` (shared by every copy of the store; the first half of
    /// the ids of commands made before writer ids existed).
    var storeID = ""
    /// This folder instance's writer id, the prefix of the idempotency keys of the commands it
    /// enqueues (``WriterID``); empty until a read-write open sets it.
    var writerID = ""
    /// How long and how many bytes the history of each data file keeps (``KeptVersions``).
    var historyRetention = KeptVersions.defaultRetention
    var historyByteLimit = KeptVersions.defaultByteLimit
    /// Which side wins a field both a save and Folio changed, per collection (``EditConflictRule``).
    var editConflictRules: [String: EditConflictRule] = [:]
    /// The app's hook for recomputing derived data after outside edits (see
    /// ``Store/Configuration/onOutsideEdit``).
    var onOutsideEdit: Store.Configuration.OutsideEditHook?

    init(storeID: String) {
        self.storeID = storeID
    }

    /// The settings a store's configuration gives.
    init(storeID: String, configuration: Store.Configuration) {
        self.storeID = storeID
        historyRetention = configuration.historyRetention
        historyByteLimit = configuration.historyByteLimit
        editConflictRules = configuration.editConflictRules
        onOutsideEdit = configuration.onOutsideEdit
    }

    /// The prefix of new commands' ids.
    var commandIDPrefix: String { writerID.isEmpty ? storeID : writerID }
}

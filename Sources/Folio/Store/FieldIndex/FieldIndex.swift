/// The scan's one stateful accelerator: each collection's field index (``FieldIndexFile``), as
/// the store uses it. Queries read it and never write it: a query takes a ``FieldIndexUpdate``
/// from here (``update(for:)``), which loads the columns the query filters on and notes what the
/// query found to change; the query gives it back (``finish(_:scanned:)``), and the changes wait
/// here until the store saves them in a step of its own (``saveUnsaved()``: Store+DerivedIndexes.swift,
/// the checkpoint, close).
///
/// Owns: the changes not saved yet. Guarded by the ``Store`` actor: only the ``StoreEngine``
/// holds it. The other accelerators (the predicate on fields, ``FieldFilter``, and the rows a
/// word rules out, WordRows.swift) are pure functions of a query and a file; which of them run
/// is ``ScanAccelerators/enabled``.
final class FieldIndex {
    private let fileSystem: FileSystem
    /// Queries read the index, but nothing is saved (opened read-only).
    private let isReadOnly: Bool
    /// What finished queries found to change, in the order they found it.
    private var unsaved: [FieldIndexChanges] = []

    init(fileSystem: FileSystem, isReadOnly: Bool) {
        self.fileSystem = fileSystem
        self.isReadOnly = isReadOnly
    }

    /// Whether scans read and make entries: the benchmark may turn the index off
    /// (``ScanAccelerators/index``).
    private var isEnabled: Bool { ScanAccelerators.enabled.contains(.index) }

    /// What one query over `collection` does with its index: loads nothing until the query first
    /// filters files on fields (``FieldIndexUpdate/load(fields:)``).
    func update(for collection: String) -> FieldIndexUpdate {
        FieldIndexUpdate(collection: collection, fileSystem: isEnabled ? fileSystem : nil)
    }

    /// A query over `scanned` ended: what it found to change waits for ``saveUnsaved()``.
    func finish(_ update: FieldIndexUpdate, scanned: [PartitionAddress]) {
        guard !isReadOnly, isEnabled, let changes = update.changes(scanned: scanned) else { return }
        unsaved.append(changes)
    }

    /// Whether queries left changes to save.
    var hasUnsavedChanges: Bool { !unsaved.isEmpty }

    /// Saves what queries found to change, over the indexes as they are on disk now.
    /// - Returns: Why an index could not be saved: it is derived data, rebuilt when needed, so the
    ///   caller only reports it.
    func saveUnsaved() -> [FolioError] {
        let pending = unsaved
        unsaved = []
        return FieldIndexChanges.save(pending, fileSystem)
    }
}

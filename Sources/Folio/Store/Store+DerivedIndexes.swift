/// Derived indexes are saved by the store, never by a query: what queries found to change in the
/// field index (``FieldIndexChanges``) waits in the engine's ``FieldIndex``, and is saved in a step of its own the
/// configured ``Store/Configuration/checkpointDelay`` after the read that found it, or at the
/// next checkpoint or close, whichever comes first.
extension Store {
    /// After a read: saves the field index changes it left, `checkpointDelay` later (one step for
    /// every read until then).
    func scheduleFieldIndexSave() {
        guard engine.hasUnsavedFieldIndexChanges, fieldIndexTask == nil, !isClosed else { return }
        let delay = configuration.checkpointDelay
        fieldIndexTask = Task { [weak self] in
            do { try await Task.sleep(for: delay) } catch { return }
            await self?.saveFieldIndexesNow()
        }
    }

    /// Saves the field index changes queries left, now.
    func saveFieldIndexesNow() {
        fieldIndexTask?.cancel()
        fieldIndexTask = nil
        guard !isClosed else { return }
        engine.saveFieldIndexes()
    }
}

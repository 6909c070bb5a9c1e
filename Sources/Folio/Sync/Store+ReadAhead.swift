/// Reading the queue ahead of the drain: while the server works on a window, the store is idle,
/// so the next window's command files are read then (and kept, ``CommandFileCache``), not after
/// the answer, when the drain waits for them.
extension Store {
    /// Reads the command files of the queue's first `limit` commands, as ``queueHead(limit:)``
    /// does, and keeps them for the journal generation. Decides nothing and changes nothing: the
    /// drain reads the head of the queue again when it gets there, and a file that cannot be read
    /// is reported then.
    /// - Parameter limit: How many commands from the head of the queue.
    func readAhead(limit: Int) async {
        do {
            _ = try await read { engine throws(FolioError) in try engine.queueHead(limit: limit).pendingCount }
        } catch {
            engine.report(.debug, "reading the queue ahead failed (\(error)); the drain reads it again when it gets there")
        }
    }
}

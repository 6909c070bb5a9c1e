/// The failed commands without reading the pending ones: a queue of tens of thousands of commands
/// usually has a handful of failed ones, and `status` shows them beside the queue's head.
extension OutboxBook {
    /// The failed commands, in order: from the whole outbox if this process read it, else from the
    /// names in `outbox/failed/` and the commands the current generation's records change, each
    /// candidate read as ``location(of:)`` reads it. A file that cannot be read has the whole
    /// outbox read, which decides.
    /// - Returns: Each failed command with its reason.
    /// - Throws: ``FolioError`` when a folder or a file cannot be read.
    func failedCommands() throws(FolioError) -> [(sequence: UInt64, command: JSONValue, reason: JSONValue)] {
        if let state = queue.commands { return state.failed }
        let listed = try fileSystem.list(Self.failedFolder).compactMap { entry in
            entry.isDirectory ? nil : CommandFileName.sequence(fromFileName: entry.name)
        }
        var found: [(sequence: UInt64, command: JSONValue, reason: JSONValue)] = []
        for sequence in Set(listed).union(recordedChanges().changes.keys).sorted() {
            let location = try location(of: sequence)
            if let state = queue.commands { return state.failed }
            if case .failed(let command, let reason) = location { found.append((sequence, command, reason)) }
        }
        return found
    }
}

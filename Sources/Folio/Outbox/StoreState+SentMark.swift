/// What the server may have seen: every command up to a number may have reached it, durably known.
///
/// Coalescing may replace or drop a pending command only if no process can have sent it: a
/// command whose answer was lost may have been applied. Sends are strictly in order, so one
/// number says it: `.folio/sent.json` holds `{"sentThrough": N}`, written durably before a
/// command of a coalescing collection leaves, and read by every process before it coalesces.
extension StoreState {
    static let sentMarkFile = ".folio/sent.json"

    /// Commands up to this number may have reached the server (from this process, or from any
    /// process before, as `.folio/sent.json` records).
    func sentThrough() throws(FolioError) -> UInt64 {
        guard let (bytes, _) = try fileSystem.read(Self.sentMarkFile) else { return outbox.inFlightThrough }
        var problem: String?
        var recorded: UInt64 = 0
        do {
            if let value = try JSONParser.parse(bytes)["sentThrough"]?.sequenceValue { recorded = value } else {
                problem = "no positive integer \"sentThrough\""
            }
        } catch {
            problem = error.message
        }
        if let problem {
            // Not knowing what was sent, assume everything pending may have been: coalescing
            // then keeps every command, which is always safe.
            report(.warning, "unreadable (\(problem)); every pending command counts as possibly sent", path: Self.sentMarkFile)
            recorded = try loadedOutbox().highestSequence
        }
        return max(outbox.inFlightThrough, recorded)
    }

    /// Records, durably when it matters, that commands up to `sequence` may reach the server.
    /// Must run under the writers' lock, before the request leaves.
    /// - Returns: Whether a file was written.
    /// - Parameter known: Sync modes the caller knows (the sync engine's collections): a sync-only
    ///   process may not have registered the app's types. A collection known nowhere counts as
    ///   coalescing, the safe side.
    @discardableResult
    func markMaySend(through sequence: UInt64, known: [String: SyncMode] = [:]) throws(FolioError) -> Bool {
        defer { self.outbox.markInFlight(through: sequence) }
        let outbox = try loadedOutbox()
        let recorded = try sentThrough()
        guard sequence > recorded else { return false }
        // Only coalescing replaces or drops commands: without it nothing depends on the mark.
        var matters = false
        for pending in outbox.pendingSequences where pending > recorded {
            guard pending <= sequence else { break }
            if case .pending(let command)? = outbox.commands[pending], let collection = command["collection"]?.stringValue,
               command["operation"]?.stringValue != "custom",
               (self.outbox.syncModes[collection] ?? known[collection])?.coalescing ?? true {
                matters = true
                break
            }
        }
        guard matters else { return false }
        let file = JSONValue.object(["sentThrough": .number(String(sequence))])
        try AtomicFile(fileSystem: fileSystem).replace(Self.sentMarkFile, with: JSONWriter.pretty(file))
        try fileSystem.syncDirectory(StoreLayout.machinery)
        return true
    }
}

/// What the server may have seen: every command up to a number may have reached it, durably known.
///
/// Coalescing may replace or drop a pending command only if no process can have sent it: a
/// command whose answer was lost may have been applied. Sends are strictly in order, so one
/// number says it: `.folio/sent.json` holds `{"sentThrough": N}`, written durably before any
/// command up to N leaves (whatever its collection, whichever process sends it), and read by
/// every process before it coalesces or a migration rewrites a command.
extension OutboxBook {
    static let sentMarkFile = ".folio/sent.json"

    /// Commands up to this number may have reached the server (from this process, or from any
    /// process before, as `.folio/sent.json` records).
    func sentThrough() throws(FolioError) -> UInt64 {
        max(queue.inFlightThrough, try recordedSentThrough())
    }

    /// What `.folio/sent.json` records (0 without the file; every command known when it cannot
    /// be read, the safe side).
    private func recordedSentThrough() throws(FolioError) -> UInt64 {
        guard let (bytes, _) = try fileSystem.read(Self.sentMarkFile) else { return 0 }
        var problem: String?
        do {
            if let value = try JSONParser.parse(bytes)["sentThrough"]?.sequenceValue { return value }
            problem = "no positive integer \"sentThrough\""
        } catch {
            problem = error.message
        }
        // Not knowing what was sent, assume everything pending may have been: coalescing then
        // keeps every command, which is always safe.
        report(.warning, "unreadable (\(problem ?? "")); every pending command counts as possibly sent", path: Self.sentMarkFile)
        return try loaded().highestSequence
    }

    /// Before a sync engine sends the head of the queue: keeps the commands that are still
    /// pending (the leading ones, in order: a command another transaction coalesced away since
    /// the queue was read must not leave, nor anything after it), and records durably that
    /// commands up to the last of them may reach the server. Must run under the writers' lock,
    /// after the journal was read again, before the first byte leaves.
    /// - Parameter sequences: The commands about to be sent, in queue order.
    /// - Returns: How many of the leading ones are still pending: only those may be sent.
    func markMaySend(_ sequences: [UInt64]) throws(FolioError) -> Int {
        var sendable = 0
        for sequence in sequences {
            guard case .pending = try location(of: sequence) else { break }
            sendable += 1
        }
        guard sendable > 0 else { return 0 }
        let through = sequences[sendable - 1]
        defer { queue.markInFlight(through: through) }
        guard through > (try recordedSentThrough()) else { return sendable }
        let file = JSONValue.object(["sentThrough": .number(String(through))])
        try AtomicFile(fileSystem: fileSystem).replace(Self.sentMarkFile, with: JSONWriter.pretty(file))
        try fileSystem.syncDirectory(StoreLayout.machinery)
        return sendable
    }

    /// A copy of a store that became a store of its own: what the original's processes sent is
    /// not this copy's to trust, so every pending command counts as possibly sent (no mark when
    /// no command was ever queued: nothing was sent, which a missing mark says, FORMAT.md).
    func markEverythingMaySend() throws(FolioError) {
        let outbox = try loaded()
        if outbox.highestSequence == 0 {
            try fileSystem.unlink(Self.sentMarkFile)
        } else {
            let file = JSONValue.object(["sentThrough": .number(String(outbox.highestSequence))])
            try AtomicFile(fileSystem: fileSystem).replace(Self.sentMarkFile, with: JSONWriter.pretty(file))
        }
    }
}

public import Foundation

/// Retry bookkeeping for the outbox: how often a command was tried, why the last try failed, and
/// when to try again. It lives in `.folio/attempts.json`, never in the command files (which are
/// never rewritten), and is advisory: losing it only resets the counts.
public struct CommandAttempts: Sendable, Equatable {
    /// How many times sending failed so far.
    public var count: Int
    /// How many of those failures the server answered (5xx, 429…), as opposed to failures to
    /// reach it: only these count toward dead-lettering.
    public var serverErrors: Int = 0
    /// Why the last attempt failed.
    public var lastError: String?
    /// Not before this time should the command be tried again.
    public var nextAttempt: Date?
    /// Whether the server answered the last failed attempt (so its delay holds even when the
    /// network comes back), rather than being unreachable.
    public var serverAnsweredLast: Bool = false

    /// No attempt yet.
    public static let none = CommandAttempts(count: 0, lastError: nil, nextAttempt: nil)

    /// One entry of `.folio/attempts.json` (FORMAT.md); nil without an integer `count`.
    init?(json entry: JSONValue) {
        guard let count = entry["count"]?.integerValue else { return nil }
        self.init(
            count: Int(count), serverErrors: Int(entry["serverErrors"]?.integerValue ?? 0), lastError: entry["lastError"]?.stringValue,
            nextAttempt: entry["nextAttempt"]?.stringValue.flatMap(OutboxCommand.parseDate))
        serverAnsweredLast = entry["serverAnsweredLast"] == .bool(true)
    }

    /// Creates a record.
    public init(count: Int, serverErrors: Int = 0, lastError: String?, nextAttempt: Date?) {
        self.count = count
        self.serverErrors = serverErrors
        self.lastError = lastError
        self.nextAttempt = nextAttempt
    }
}

extension Store {
    static let attemptsFile = ".folio/attempts.json"

    /// Records a failed attempt to send a command. For sync engines.
    /// - Parameters:
    ///   - sequence: The pending command's number.
    ///   - error: Why the attempt failed (kept to show in a UI).
    ///   - nextAttempt: When to try again.
    ///   - serverAnswered: Whether the server answered (a 5xx, a 429…) rather than being
    ///     unreachable; only answered failures count toward ``CommandAttempts/serverErrors``.
    /// - Returns: The command's attempts, this one included.
    @discardableResult
    public func recordFailedAttempt(
        _ sequence: UInt64, error: String, nextAttempt: Date,
        serverAnswered: Bool = true
    ) async throws -> CommandAttempts {
        try await prepare()
        try await acquireWriterLock()
        defer { releaseWriterLock() }
        try engine.refreshJournal()
        var all: [UInt64: CommandAttempts] = [:]
        for (number, kept) in try readAttempts() {
            if case .pending = try engine.outboxLocation(of: number) { all[number] = kept }
        }
        var attempts = all[sequence] ?? .none
        attempts.count += 1
        if serverAnswered { attempts.serverErrors += 1 }
        attempts.serverAnsweredLast = serverAnswered
        attempts.lastError = String(error.prefix(2000))
        attempts.nextAttempt = nextAttempt
        all[sequence] = attempts
        try writeAttempts(all)
        return attempts
    }

    /// The attempts made so far to send a command (``CommandAttempts/none`` if none).
    /// - Parameter sequence: The command's number.
    public func attempts(for sequence: UInt64) async throws -> CommandAttempts {
        // Bookkeeping of a command no longer in the queue is stale until the next failure prunes it.
        guard case .pending = try await read({ engine throws(FolioError) in try engine.outboxLocation(of: sequence) }) else {
            return .none
        }
        return try readAttempts()[sequence] ?? .none
    }

    private func readAttempts() throws(FolioError) -> [UInt64: CommandAttempts] {
        guard let (bytes, _) = try fileSystem.read(Self.attemptsFile) else { return [:] }
        let value: JSONValue
        do { value = try JSONParser.parse(bytes) } catch {
            // Advisory data: a damaged file resets the counts, it does not stop the queue.
            engine.report(.warning, "unreadable (\(error.message)); attempt counts start again", path: Self.attemptsFile)
            return [:]
        }
        var result: [UInt64: CommandAttempts] = [:]
        for (key, entry) in value.objectValue ?? [:] {
            guard let sequence = UInt64(key), let attempts = CommandAttempts(json: entry) else { continue }
            result[sequence] = attempts
        }
        return result
    }

    private func writeAttempts(_ attempts: [UInt64: CommandAttempts]) throws(FolioError) {
        var members: [String: JSONValue] = [:]
        for (sequence, entry) in attempts {
            var fields: [String: JSONValue] = [
                "count": .number(String(entry.count)), "serverErrors": .number(String(entry.serverErrors)),
                "serverAnsweredLast": .bool(entry.serverAnsweredLast),
            ]
            if let lastError = entry.lastError { fields["lastError"] = .string(lastError) }
            if let next = entry.nextAttempt {
                fields["nextAttempt"] = .string(next.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)))
            }
            members[CommandFileName.stem(sequence)] = .object(fields)
        }
        try AtomicFile(fileSystem: fileSystem).replace(Self.attemptsFile, with: JSONWriter.pretty(.object(members)))
        try fileSystem.syncDirectory(StoreLayout.machinery)
    }
}

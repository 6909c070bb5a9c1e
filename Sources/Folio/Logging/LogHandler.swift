/// A message from Folio about something an operator may want to know: a file that could not be
/// read, a journal tail that was discarded, temp files cleaned up. Folio never prints; hand it a
/// ``LogHandler`` to route these into your app's logging.
public struct LogMessage: Sendable, CustomStringConvertible {
    /// How much attention the message deserves.
    public enum Level: Int, Sendable, Comparable {
        /// From least to most attention: `debug` (what Folio did, for tracing), `info` (a recovery
        /// step, a replayed journal), `warning` (something a person may want to look at; the store
        /// works on), `error` (something failed; the message says what still holds).
        case debug, info, warning, error
        /// Whether `a` deserves less attention than `b` (`debug` < `info` < `warning` < `error`).
        /// - Parameters:
        ///   - a: A level.
        ///   - b: Another level.
        /// - Returns: True if `a` comes before `b`.
        public static func < (a: Level, b: Level) -> Bool { a.rawValue < b.rawValue }
    }

    /// How much attention the message deserves.
    public let level: Level
    /// What happened, in one sentence.
    public let text: String
    /// The file concerned, relative to the store, if any.
    public let path: String?

    /// The message in one line: `[folio warning] todos/2026-11/2026-11-22.json: …`.
    public var description: String {
        "[folio \(level)] " + (path.map { "\($0): " } ?? "") + text
    }
}

/// Receives Folio's log messages. Called from Folio's own tasks: it must be quick and thread-safe.
public typealias LogHandler = @Sendable (LogMessage) -> Void

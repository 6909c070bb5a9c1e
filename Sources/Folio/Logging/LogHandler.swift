/// A message from Folio about something an operator may want to know: a file that could not be
/// read, a journal tail that was discarded, temp files cleaned up. Folio never prints; hand it a
/// ``LogHandler`` to route these into your app's logging.
public struct LogMessage: Sendable, CustomStringConvertible {
    /// How much attention the message deserves.
    public enum Level: Int, Sendable, Comparable {
        case debug, info, warning, error
        public static func < (a: Level, b: Level) -> Bool { a.rawValue < b.rawValue }
    }

    /// How much attention the message deserves.
    public let level: Level
    /// What happened, in one sentence.
    public let text: String
    /// The file concerned, relative to the store, if any.
    public let path: String?

    public var description: String {
        "[folio \(level)] " + (path.map { "\($0): " } ?? "") + text
    }
}

/// Receives Folio's log messages. Called from Folio's own tasks: it must be quick and thread-safe.
public typealias LogHandler = @Sendable (LogMessage) -> Void

/// The one place where command file names become sequence numbers and back (FORMAT.md, "The
/// outbox"): `outbox/00000000000000000042.json`, its failure reason
/// `outbox/failed/00000000000000000042.reason.json`. Exactly 20 digits, a sequence from 1.
enum CommandFileName {
    static let digits = 20
    static let suffix = ".json"
    static let reasonSuffix = ".reason.json"

    /// `00000000000000000042`: the sequence in 20 digits.
    static func stem(_ sequence: UInt64) -> String {
        String(sequence).leftPadded(to: digits)
    }

    /// `00000000000000000042.json`.
    static func name(_ sequence: UInt64) -> String { stem(sequence) + suffix }

    /// `00000000000000000042.reason.json`.
    static func reasonName(_ sequence: UInt64) -> String { stem(sequence) + reasonSuffix }

    /// The sequence a command file's name gives, or nil when it is no command file's.
    static func sequence(fromFileName name: String) -> UInt64? {
        guard name.hasSuffix(suffix), !name.hasSuffix(reasonSuffix) else { return nil }
        return sequence(fromStem: name.dropLast(suffix.utf8.count))
    }

    /// The sequence a failure reason's file name gives, or nil when it is no reason file's.
    static func sequence(fromReasonFileName name: String) -> UInt64? {
        guard name.hasSuffix(reasonSuffix) else { return nil }
        return sequence(fromStem: name.dropLast(reasonSuffix.utf8.count))
    }

    /// The sequence of a command file or a reason file named by its path in the store's folder
    /// (under `outbox/`), or nil for any other path.
    static func sequence(ofPath path: String) -> UInt64? {
        guard path.hasPrefix("outbox/") else { return nil }
        let name = FileSystem.name(of: path)
        return sequence(fromFileName: name) ?? sequence(fromReasonFileName: name)
    }

    private static func sequence(fromStem stem: Substring) -> UInt64? {
        guard stem.utf8.count == digits, stem.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return UInt64(stem).flatMap { $0 > 0 ? $0 : nil }
    }
}

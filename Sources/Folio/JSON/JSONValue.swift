/// A JSON document as Folio keeps it in memory: the exact values of a file, including fields that
/// no Swift type knows, so they survive a read-modify-write.
///
/// Numbers keep their original text (`1.0` stays `1.0`, a 20-digit id stays exact), which keeps
/// rewritten files byte-identical to what was read.
///
/// Public for JSON-level migrations (``MigrationStep``), which read and write entities as JSON.
public enum JSONValue: Sendable, Equatable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// The number's text, already validated against the JSON grammar. Build one from a Swift
    /// number with `.number(String(42))`.
    case number(String)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object; member order does not matter (files sort keys).
    case object([String: JSONValue])

    /// The members, if this is an object.
    public var objectValue: [String: JSONValue]? {
        if case .object(let members) = self { return members }
        return nil
    }

    /// The text, if this is a string.
    public var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    /// The number as an integer, if this is a number written as one that fits.
    public var integerValue: Int64? {
        if case .number(let text) = self { return Int64(text) }
        return nil
    }

    /// The member with this key, if this is an object that has it.
    public subscript(key: String) -> JSONValue? {
        objectValue?[key]
    }
}

extension String {
    /// Folio's one key order: by UTF-8 bytes, which any language can reproduce (and which is what
    /// `jq -S` does for the ASCII keys Swift types use).
    func precedesInKeyOrder(_ other: String) -> Bool {
        // On the contiguous bytes where the string has them (native strings do), without a copy.
        let answer = utf8.withContiguousStorageIfAvailable { a in
            other.utf8.withContiguousStorageIfAvailable { b in
                for index in 0..<Swift.min(a.count, b.count) where a[index] != b[index] { return a[index] < b[index] }
                return a.count < b.count
            }
        }
        return (answer ?? nil) ?? utf8.lexicographicallyPrecedes(other.utf8)
    }
}

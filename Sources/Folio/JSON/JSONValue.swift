/// A JSON document as Folio keeps it in memory: the exact values of a file, including fields that
/// no Swift type knows, so they survive a read-modify-write.
///
/// Numbers keep their original text (`1.0` stays `1.0`, a 20-digit id stays exact), which keeps
/// rewritten files byte-identical to what was read.
enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    /// The number's text, already validated against the JSON grammar.
    case number(String)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    var objectValue: [String: JSONValue]? {
        if case .object(let members) = self { return members }
        return nil
    }

    var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    var integerValue: Int64? {
        if case .number(let text) = self { return Int64(text) }
        return nil
    }

    subscript(key: String) -> JSONValue? {
        objectValue?[key]
    }
}

extension String {
    /// Folio's one key order: by UTF-8 bytes, which any language can reproduce (and which is what
    /// `jq -S` does for the ASCII keys Swift types use).
    func precedesInKeyOrder(_ other: String) -> Bool {
        utf8.lexicographicallyPrecedes(other.utf8)
    }
}

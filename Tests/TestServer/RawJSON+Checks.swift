import Foundation

/// What PROTOCOL.md asks of a body beyond being JSON: no repeated member names, and a canonical
/// form so two requests can be compared as JSON values.
extension RawJSON {
    /// The first member name repeated inside one object, anywhere in the value (`nil`: none).
    var repeatedMember: String? {
        switch value {
        case .object(let members):
            var seen: Set<String> = []
            for (key, member) in members {
                if !seen.insert(key).inserted { return key }
                if let repeated = member.repeatedMember { return repeated }
            }
            return nil
        case .array(let elements):
            return elements.lazy.compactMap(\.repeatedMember).first
        default:
            return nil
        }
    }

    /// The value as compact JSON with members sorted by name and numbers by value, so bodies
    /// that differ only in spacing, member order or number spelling compare equal.
    func canonical(in bytes: [UInt8]) -> String {
        switch value {
        case .object(let members):
            let sorted = members.sorted { $0.key < $1.key }
            return "{" + sorted.map { JSONText.quoted($0.key) + ":" + $0.value.canonical(in: bytes) }.joined(separator: ",") + "}"
        case .array(let elements):
            return "[" + elements.map { $0.canonical(in: bytes) }.joined(separator: ",") + "]"
        case .string(let text):
            return JSONText.quoted(text)
        case .number:
            let text = String(decoding: bytes[range], as: UTF8.self)
            return Double(text).map { "\($0)" } ?? text
        case .bool(let flag):
            return flag ? "true" : "false"
        case .null:
            return "null"
        }
    }
}

/// FORMAT.md's names, as the server checks them in URLs.
enum Names {
    /// Why `id` is not an entity id (1–256 bytes of UTF-8, no control characters, `/` or `\`,
    /// not `.` or `..`), or `nil` when it is one.
    static func problem(withID id: String) -> String? {
        let bytes = id.utf8
        guard (1...256).contains(bytes.count) else { return "an id is 1–256 bytes of UTF-8; this one has \(bytes.count)" }
        guard id != ".", id != ".." else { return "\(JSONText.quoted(id)) is not a valid id" }
        if bytes.contains(where: { $0 < 0x20 || $0 == 0x7F || $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "\\") }) {
            return "an id cannot contain control characters, \"/\" or \"\\\": \(JSONText.quoted(id))"
        }
        return nil
    }

    /// Whether `name` is a collection name: an ASCII letter, then letters, digits, `_` and `-`,
    /// at most 64 characters; `folio` and `outbox` are reserved.
    static func isCollection(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        func isLetter(_ byte: UInt8) -> Bool { (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) }
        guard let first = bytes.first, isLetter(first), bytes.count <= 64 else { return false }
        guard bytes.allSatisfy({ isLetter($0) || (0x30...0x39).contains($0) || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") }) else { return false }
        return !["folio", "outbox"].contains(name.lowercased())
    }
}

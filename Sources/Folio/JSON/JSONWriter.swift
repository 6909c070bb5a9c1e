/// Writes JSON in Folio's canonical form: the same value always gives the same bytes.
///
/// Pretty form (data files, commands): two-space indent, `"key": value`, keys in UTF-8 byte order,
/// empty containers as `{}` / `[]`, a trailing newline. Compact form (journal records): no
/// whitespace at all. Strings escape only `"`, `\`, and control characters.
enum JSONWriter {
    static func pretty(_ value: JSONValue) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(1024)
        write(value, into: &out, indent: 0, pretty: true)
        out.append(0x0A)
        return out
    }

    static func compact(_ value: JSONValue) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        write(value, into: &out, indent: 0, pretty: false)
        return out
    }

    /// Appends `value` in the compact form to `out` (for writers of a larger document).
    static func appendCompact(_ value: JSONValue, to out: inout [UInt8]) {
        write(value, into: &out, indent: 0, pretty: false)
    }

    static func sortedKeys(_ members: [String: JSONValue]) -> [String] {
        members.keys.sorted { $0.precedesInKeyOrder($1) }
    }

    private static func newline(_ out: inout [UInt8], _ indent: Int) {
        out.append(0x0A)
        out.append(contentsOf: repeatElement(0x20, count: indent * 2))
    }

    private static func write(_ value: JSONValue, into out: inout [UInt8], indent: Int, pretty: Bool) {
        switch value {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let flag): out.append(contentsOf: (flag ? "true" : "false").utf8)
        case .number(let text): out.append(contentsOf: text.utf8)
        case .string(let text): appendString(text, to: &out)
        case .array(let elements):
            if elements.isEmpty { out.append(contentsOf: "[]".utf8); return }
            out.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                if pretty { newline(&out, indent + 1) }
                write(element, into: &out, indent: indent + 1, pretty: pretty)
            }
            if pretty { newline(&out, indent) }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            if members.isEmpty { out.append(contentsOf: "{}".utf8); return }
            out.append(UInt8(ascii: "{"))
            // The members sorted with their values: no second look-up of each key.
            for (index, member) in members.sorted(by: { $0.key.precedesInKeyOrder($1.key) }).enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                if pretty { newline(&out, indent + 1) }
                appendString(member.key, to: &out)
                out.append(UInt8(ascii: ":"))
                if pretty { out.append(0x20) }
                write(member.value, into: &out, indent: indent + 1, pretty: pretty)
            }
            if pretty { newline(&out, indent) }
            out.append(UInt8(ascii: "}"))
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// Appends `text` as a JSON string to `out`.
    static func appendString(_ text: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        // The string's own contiguous bytes where it has them (native strings do), without a copy.
        if text.utf8.withContiguousStorageIfAvailable({ writeEscaped($0, into: &out) }) == nil {
            Array(text.utf8).withUnsafeBufferPointer { writeEscaped($0, into: &out) }
        }
        out.append(UInt8(ascii: "\""))
    }

    /// A string's bytes, escaped: runs of bytes that need no escape are copied whole.
    private static func writeEscaped(_ bytes: UnsafeBufferPointer<UInt8>, into out: inout [UInt8]) {
        var start = 0
        for index in 0..<bytes.count {
            let byte = bytes[index]
            guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte == 0x7F else { continue }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<index]))
            start = index + 1
            out.append(0x5C)
            switch byte {
            case UInt8(ascii: "\""): out.append(0x22)
            case UInt8(ascii: "\\"): out.append(0x5C)
            case 0x0A: out.append(UInt8(ascii: "n"))
            case 0x0D: out.append(UInt8(ascii: "r"))
            case 0x09: out.append(UInt8(ascii: "t"))
            case 0x08: out.append(UInt8(ascii: "b"))
            case 0x0C: out.append(UInt8(ascii: "f"))
            default:
                out.append(UInt8(ascii: "u"))
                out.append(0x30)
                out.append(0x30)
                out.append(hexDigits[Int(byte >> 4)])
                out.append(hexDigits[Int(byte & 0x0F)])
            }
        }
        out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<bytes.count]))
    }
}

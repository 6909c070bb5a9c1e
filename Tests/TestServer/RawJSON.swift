import Foundation

/// A JSON value parsed just far enough to navigate it, remembering where every value lies in the
/// source bytes, so a batch item's `body` can be stored exactly as the client wrote it.
struct RawJSON {
    enum Value {
        case object([(key: String, value: RawJSON)])
        case array([RawJSON])
        case string(String)
        case number
        case bool(Bool)
        case null
    }

    var value: Value
    /// Where the value lies in the source.
    var range: Range<Int>

    /// The value of a member of an object (the last one for a repeated key).
    subscript(key: String) -> RawJSON? {
        guard case .object(let members) = value else { return nil }
        return members.last { $0.key == key }?.value
    }

    var stringValue: String? {
        if case .string(let text) = value { return text }
        return nil
    }

    var isNull: Bool {
        if case .null = value { return true }
        return false
    }

    /// Parses one JSON document (RFC 8259, nesting at most 512 deep).
    static func parse(_ bytes: [UInt8]) throws(RawJSONError) -> RawJSON {
        var parser = RawJSONParser(bytes: bytes)
        parser.skipWhitespace()
        let value = try parser.parseValue(depth: 0)
        parser.skipWhitespace()
        guard parser.index == bytes.count else { throw RawJSONError(offset: parser.index, reason: "trailing characters") }
        return value
    }
}

struct RawJSONError: Error, CustomStringConvertible {
    var offset: Int
    var reason: String
    var description: String { "invalid JSON at byte \(offset): \(reason)" }
}

private struct RawJSONParser {
    let bytes: [UInt8]
    var index = 0

    init(bytes: [UInt8]) { self.bytes = bytes }

    private func fail(_ reason: String) -> RawJSONError { RawJSONError(offset: index, reason: reason) }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    mutating func skipWhitespace() {
        while let byte = current, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { index += 1 }
    }

    mutating func parseValue(depth: Int) throws(RawJSONError) -> RawJSON {
        guard depth < 512 else { throw fail("nested too deeply") }
        let start = index
        guard let byte = current else { throw fail("unexpected end") }
        let value: RawJSON.Value
        switch byte {
        case UInt8(ascii: "{"):
            index += 1
            var members: [(key: String, value: RawJSON)] = []
            skipWhitespace()
            if current == UInt8(ascii: "}") {
                index += 1
            } else {
                while true {
                    skipWhitespace()
                    guard current == UInt8(ascii: "\"") else { throw fail("expected a key") }
                    let key = try parseString()
                    skipWhitespace()
                    guard current == UInt8(ascii: ":") else { throw fail("expected ':'") }
                    index += 1
                    skipWhitespace()
                    members.append((key, try parseValue(depth: depth + 1)))
                    skipWhitespace()
                    if current == UInt8(ascii: ",") { index += 1; continue }
                    guard current == UInt8(ascii: "}") else { throw fail("expected ',' or '}'") }
                    index += 1
                    break
                }
            }
            value = .object(members)
        case UInt8(ascii: "["):
            index += 1
            var elements: [RawJSON] = []
            skipWhitespace()
            if current == UInt8(ascii: "]") {
                index += 1
            } else {
                while true {
                    skipWhitespace()
                    elements.append(try parseValue(depth: depth + 1))
                    skipWhitespace()
                    if current == UInt8(ascii: ",") { index += 1; continue }
                    guard current == UInt8(ascii: "]") else { throw fail("expected ',' or ']'") }
                    index += 1
                    break
                }
            }
            value = .array(elements)
        case UInt8(ascii: "\""):
            value = .string(try parseString())
        case UInt8(ascii: "t"):
            try literal("true")
            value = .bool(true)
        case UInt8(ascii: "f"):
            try literal("false")
            value = .bool(false)
        case UInt8(ascii: "n"):
            try literal("null")
            value = .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            try parseNumber()
            value = .number
        default:
            throw fail("unexpected character")
        }
        return RawJSON(value: value, range: start..<index)
    }

    private mutating func literal(_ word: String) throws(RawJSONError) {
        let expected = Array(word.utf8)
        guard index + expected.count <= bytes.count, Array(bytes[index..<index + expected.count]) == expected else {
            throw fail("bad literal")
        }
        index += expected.count
    }

    private mutating func parseNumber() throws(RawJSONError) {
        if current == UInt8(ascii: "-") { index += 1 }
        guard let first = current, isDigit(first) else { throw fail("bad number") }
        index += 1
        if first != UInt8(ascii: "0") { while let byte = current, isDigit(byte) { index += 1 } }
        if current == UInt8(ascii: ".") {
            index += 1
            guard let byte = current, isDigit(byte) else { throw fail("bad fraction") }
            while let byte = current, isDigit(byte) { index += 1 }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            index += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            guard let byte = current, isDigit(byte) else { throw fail("bad exponent") }
            while let byte = current, isDigit(byte) { index += 1 }
        }
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private mutating func parseString() throws(RawJSONError) -> String {
        index += 1   // opening quote
        var decoded: [UInt8] = []
        while true {
            guard let byte = current else { throw fail("unterminated string") }
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                guard let text = String(bytes: decoded, encoding: .utf8) else { throw fail("string is not UTF-8") }
                return text
            case UInt8(ascii: "\\"):
                index += 1
                guard let escaped = current else { throw fail("unterminated escape") }
                index += 1
                let scalar: Unicode.Scalar
                switch escaped {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): scalar = Unicode.Scalar(escaped)
                case UInt8(ascii: "b"): scalar = "\u{08}"
                case UInt8(ascii: "f"): scalar = "\u{0C}"
                case UInt8(ascii: "n"): scalar = "\n"
                case UInt8(ascii: "r"): scalar = "\r"
                case UInt8(ascii: "t"): scalar = "\t"
                case UInt8(ascii: "u"):
                    var code = try hex4()
                    if (0xD800..<0xDC00).contains(code) {
                        guard current == UInt8(ascii: "\\"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "u") else {
                            throw fail("lone surrogate")
                        }
                        index += 2
                        let low = try hex4()
                        guard (0xDC00..<0xE000).contains(low) else { throw fail("bad surrogate pair") }
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00..<0xE000).contains(code) {
                        throw fail("lone surrogate")
                    }
                    guard let value = Unicode.Scalar(code) else { throw fail("bad code point") }
                    scalar = value
                default:
                    throw fail("bad escape")
                }
                decoded.append(contentsOf: String(Character(scalar)).utf8)
            case 0..<0x20:
                throw fail("control character in string")
            default:
                decoded.append(byte)
                index += 1
            }
        }
    }

    private mutating func hex4() throws(RawJSONError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw fail("bad \\u escape") }
        var code: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw fail("bad \\u escape")
            }
            code = code << 4 | digit
            index += 1
        }
        return code
    }
}

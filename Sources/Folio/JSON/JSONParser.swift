/// A strict JSON parser (RFC 8259) that reports errors with a line and column, rejects duplicate
/// keys, and limits nesting so hostile input cannot exhaust the stack.
struct JSONParser {
    /// Why a document is not valid JSON, and where (1-based line and byte column).
    struct Failure: Error, Equatable {
        let message: String
        let line: Int
        let column: Int
    }

    static let maximumDepth = 512

    /// Parses one JSON document; anything but whitespace after it is an error.
    static func parse(_ bytes: [UInt8]) throws(Failure) -> JSONValue {
        try bytes.withUnsafeBufferPointer { buffer throws(Failure) in
            var parser = JSONParser(buffer)
            parser.skipWhitespace()
            let value = try parser.parseValue(depth: 0)
            parser.skipWhitespace()
            if parser.position < buffer.count {
                throw parser.failure("unexpected text after the JSON value")
            }
            return value
        }
    }

    private let bytes: UnsafeBufferPointer<UInt8>
    private var position = 0

    /// A member of an object not yet closed, with the offset of its key for errors.
    private struct PendingMember {
        let key: String
        let value: JSONValue
        let offset: Int
    }

    private var pendingMembers: [PendingMember] = []

    private init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    private func failure(_ message: String, at offset: Int? = nil) -> Failure {
        let end = min(offset ?? position, bytes.count)
        var line = 1
        var lineStart = 0
        for index in 0..<end where bytes[index] == UInt8(ascii: "\n") {
            line += 1
            lineStart = index + 1
        }
        return Failure(message: message, line: line, column: end - lineStart + 1)
    }

    private mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x0A, 0x0D, 0x09: position += 1
            default: return
            }
        }
    }

    private func describeNext() -> String {
        guard position < bytes.count else { return "the end of the file" }
        let byte = bytes[position]
        if byte >= 0x21 && byte < 0x7F { return "'\(Character(UnicodeScalar(byte)))'" }
        return "byte 0x" + String(byte, radix: 16)
    }

    private mutating func parseValue(depth: Int) throws(Failure) -> JSONValue {
        guard position < bytes.count else { throw failure("expected a value but found the end of the file") }
        switch bytes[position] {
        case UInt8(ascii: "{"): return try parseObject(depth: depth + 1)
        case UInt8(ascii: "["): return try parseArray(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        default: throw failure("expected a value but found \(describeNext())")
        }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(Failure) {
        let count = literal.utf8CodeUnitCount
        let start = literal.utf8Start
        guard position + count <= bytes.count else { throw failure("expected '\(literal)'") }
        for index in 0..<count where bytes[position + index] != start[index] {
            throw failure("expected '\(literal)'")
        }
        position += count
    }

    private mutating func parseObject(depth: Int) throws(Failure) -> JSONValue {
        if depth > Self.maximumDepth { throw failure("nesting deeper than \(Self.maximumDepth) levels") }
        position += 1
        skipWhitespace()
        if position < bytes.count && bytes[position] == UInt8(ascii: "}") {
            position += 1
            return .object([:])
        }
        // The members wait on the parser's stack (shared by every level of nesting) until the
        // object ends, so that its dictionary is made once at its final size: no growing, and one
        // hash per key.
        let first = pendingMembers.count
        while true {
            skipWhitespace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else {
                throw failure("expected a quoted key but found \(describeNext())")
            }
            let keyOffset = position
            let key = try parseString()
            skipWhitespace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else {
                throw failure("expected ':' after key \"\(key)\" but found \(describeNext())")
            }
            position += 1
            skipWhitespace()
            pendingMembers.append(PendingMember(key: key, value: try parseValue(depth: depth), offset: keyOffset))
            skipWhitespace()
            guard position < bytes.count else { throw failure("unterminated object: expected ',' or '}'") }
            if bytes[position] == UInt8(ascii: ",") { position += 1; continue }
            if bytes[position] == UInt8(ascii: "}") { position += 1; return .object(try popMembers(from: first)) }
            throw failure("expected ',' or '}' but found \(describeNext())")
        }
    }

    /// The object of the members pending from `first` on, taken off the stack.
    private mutating func popMembers(from first: Int) throws(Failure) -> [String: JSONValue] {
        var members = [String: JSONValue](minimumCapacity: pendingMembers.count - first)
        for index in first..<pendingMembers.count {
            let member = pendingMembers[index]
            guard members.updateValue(member.value, forKey: member.key) == nil else {
                // Swift's String == is canonical equivalence: "café" precomposed and decomposed
                // are one dictionary key. Never merge them silently: say which bytes collided.
                let earlier = pendingMembers[first..<index].first { $0.key == member.key }?.key ?? member.key
                if Array(earlier.utf8) == Array(member.key.utf8) {
                    throw failure("duplicate key \"\(member.key)\"", at: member.offset)
                }
                throw failure(
                    "key \"\(member.key)\" (UTF-8 \(Names.hexBytes(member.key))) is canonically equivalent to the earlier key \"\(earlier)\" (UTF-8 \(Names.hexBytes(earlier))): the same text in two Unicode normalizations; Folio keeps keys as exact bytes and will not merge them",
                    at: member.offset)
            }
        }
        pendingMembers.removeSubrange(first...)
        return members
    }

    private mutating func parseArray(depth: Int) throws(Failure) -> JSONValue {
        if depth > Self.maximumDepth { throw failure("nesting deeper than \(Self.maximumDepth) levels") }
        position += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if position < bytes.count && bytes[position] == UInt8(ascii: "]") {
            position += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue(depth: depth))
            skipWhitespace()
            guard position < bytes.count else { throw failure("unterminated array: expected ',' or ']'") }
            if bytes[position] == UInt8(ascii: ",") { position += 1; continue }
            if bytes[position] == UInt8(ascii: "]") { position += 1; return .array(elements) }
            throw failure("expected ',' or ']' but found \(describeNext())")
        }
    }

    private mutating func parseString() throws(Failure) -> String {
        let openingQuote = position
        position += 1
        let start = position
        var ascii = true
        // Fast path: no escapes.
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                let slice = UnsafeBufferPointer(rebasing: bytes[start..<position])
                position += 1
                // ASCII needs no validation (and skips the generic validating initializer,
                // a tenth of reading a day file).
                if ascii { return String(decoding: slice, as: UTF8.self) }
                guard let text = String(validating: slice, as: UTF8.self) else {
                    throw failure("invalid UTF-8 in string", at: openingQuote)
                }
                return text
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw failure("control character in string (escape it)") }
            if byte >= 0x80 { ascii = false }
            position += 1
        }
        var scratch = Array(UnsafeBufferPointer(rebasing: bytes[start..<position]))
        while position < bytes.count {
            let byte = bytes[position]
            switch byte {
            case UInt8(ascii: "\""):
                position += 1
                guard let text = String(validating: scratch, as: UTF8.self) else {
                    throw failure("invalid UTF-8 in string", at: openingQuote)
                }
                return text
            case UInt8(ascii: "\\"):
                position += 1
                guard position < bytes.count else { break }
                let escape = bytes[position]
                position += 1
                switch escape {
                case UInt8(ascii: "\""): scratch.append(0x22)
                case UInt8(ascii: "\\"): scratch.append(0x5C)
                case UInt8(ascii: "/"): scratch.append(0x2F)
                case UInt8(ascii: "b"): scratch.append(0x08)
                case UInt8(ascii: "f"): scratch.append(0x0C)
                case UInt8(ascii: "n"): scratch.append(0x0A)
                case UInt8(ascii: "r"): scratch.append(0x0D)
                case UInt8(ascii: "t"): scratch.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try parseHex4()
                    if (0xD800...0xDBFF).contains(scalar) {
                        guard position + 1 < bytes.count, bytes[position] == UInt8(ascii: "\\"),
                            bytes[position + 1] == UInt8(ascii: "u")
                        else {
                            throw failure("unpaired surrogate in \\u escape")
                        }
                        position += 2
                        let low = try parseHex4()
                        guard (0xDC00...0xDFFF).contains(low) else { throw failure("unpaired surrogate in \\u escape") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00...0xDFFF).contains(scalar) {
                        throw failure("unpaired surrogate in \\u escape")
                    }
                    guard let unicode = Unicode.Scalar(scalar) else { throw failure("invalid \\u escape") }
                    scratch.append(contentsOf: Array(String(Character(unicode)).utf8))
                default:
                    throw failure("invalid escape '\\\(Character(UnicodeScalar(escape)))'", at: position - 2)
                }
            default:
                if byte < 0x20 { throw failure("control character in string (escape it)") }
                scratch.append(byte)
                position += 1
            }
        }
        throw failure("unterminated string", at: openingQuote)
    }

    private mutating func parseHex4() throws(Failure) -> UInt32 {
        guard position + 4 <= bytes.count else { throw failure("incomplete \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[position]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw failure("invalid hex digit in \\u escape")
            }
            value = value << 4 | digit
            position += 1
        }
        return value
    }

    private mutating func parseNumber() throws(Failure) -> String {
        let start = position
        func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
        if bytes[position] == UInt8(ascii: "-") { position += 1 }
        guard position < bytes.count, isDigit(bytes[position]) else { throw failure("invalid number") }
        if bytes[position] == UInt8(ascii: "0") {
            position += 1
            if position < bytes.count, isDigit(bytes[position]) { throw failure("leading zero in number") }
        } else {
            while position < bytes.count, isDigit(bytes[position]) { position += 1 }
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
            position += 1
            guard position < bytes.count, isDigit(bytes[position]) else { throw failure("expected a digit after '.'") }
            while position < bytes.count, isDigit(bytes[position]) { position += 1 }
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: "e") || bytes[position] == UInt8(ascii: "E") {
            position += 1
            if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") {
                position += 1
            }
            guard position < bytes.count, isDigit(bytes[position]) else { throw failure("expected a digit in exponent") }
            while position < bytes.count, isDigit(bytes[position]) { position += 1 }
        }
        return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
    }
}

import Foundation

/// Finds a member name repeated inside one JSON object: PROTOCOL.md refuses such a body (400),
/// since parsers disagree on which value wins (Foundation's keeps the last one silently).
enum RepeatedMembers {
    /// The first repeated member name in `data`, which must already be valid JSON; nil when none.
    static func first(in data: Data) -> String? {
        let bytes = [UInt8](data)
        // One entry per open object or array: the names seen so far (nil for an array), and
        // whether the next string is a member name.
        var stack: [(names: Set<String>?, expectsName: Bool)] = []
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "{"): stack.append((names: [], expectsName: true))
            case UInt8(ascii: "["): stack.append((names: nil, expectsName: false))
            case UInt8(ascii: "}"), UInt8(ascii: "]"): _ = stack.popLast()
            case UInt8(ascii: ","):
                if let last = stack.indices.last, stack[last].names != nil { stack[last].expectsName = true }
            case UInt8(ascii: "\""):
                let start = index
                index += 1
                while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
                    index += bytes[index] == UInt8(ascii: "\\") ? 2 : 1
                }
                if let last = stack.indices.last, stack[last].expectsName {
                    stack[last].expectsName = false
                    let name = decodeString(Array(bytes[start...min(index, bytes.count - 1)]))
                    if stack[last].names?.insert(name).inserted == false { return name }
                }
            default: break
            }
            index += 1
        }
        return nil
    }

    /// A JSON string literal's value (escapes decoded, so `"a"` and `"\u0061"` are one name).
    private static func decodeString(_ literal: [UInt8]) -> String {
        guard literal.contains(UInt8(ascii: "\\")) else { return String(decoding: literal.dropFirst().dropLast(), as: UTF8.self) }
        do {
            return try JSONDecoder().decode(String.self, from: Data(literal))
        } catch {
            // Valid JSON always decodes; keep the raw text as the name otherwise.
            return String(decoding: literal, as: UTF8.self)
        }
    }
}

/// Where the member keys of a (valid) JSON document are, so a problem found after parsing (a
/// duplicate id, a bad name) can still name its line and column.
///
/// Only keys down to ``maximumDepth`` are recorded: a partition file's members, its entities'
/// ids, and each entity's own members are enough to point a person at any shape problem.
struct JSONKeyLocator {
    struct Position: Equatable {
        var line: Int
        var column: Int
    }

    static let maximumDepth = 3
    private var positions: [String: Position] = [:]

    /// Scans a document that already parsed; on invalid JSON the positions are merely incomplete.
    init(_ bytes: [UInt8]) {
        enum Frame {
            case object(expectingKey: Bool, key: String?)
            case array
        }
        var stack: [Frame] = []
        var line = 1
        var lineStart = 0
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\n"):
                line += 1
                lineStart = index + 1
            case UInt8(ascii: "{"):
                stack.append(.object(expectingKey: true, key: nil))
            case UInt8(ascii: "["):
                stack.append(.array)
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                if !stack.isEmpty { stack.removeLast() }
            case UInt8(ascii: ","):
                if case .object(_, let key)? = stack.last { stack[stack.count - 1] = .object(expectingKey: true, key: key) }
            case UInt8(ascii: "\""):
                let start = index
                index += 1
                var escaped = false
                while index < bytes.count {
                    if bytes[index] == UInt8(ascii: "\\") { escaped = true; index += 2; continue }
                    if bytes[index] == UInt8(ascii: "\"") { break }
                    index += 1
                }
                let end = min(index, bytes.count - 1)
                if case .object(true, _)? = stack.last {
                    let text: String
                    if escaped {
                        do { text = try JSONParser.parse(Array(bytes[start...end])).stringValue ?? "" } catch { text = "" }
                    } else {
                        text = String(decoding: bytes[(start + 1)..<max(start + 1, end)], as: UTF8.self)
                    }
                    stack[stack.count - 1] = .object(expectingKey: false, key: text)
                    if stack.count <= Self.maximumDepth {
                        let parents: [String] = stack.dropLast().compactMap {
                            if case .object(_, let key) = $0 { return key ?? "" }
                            return "[]"
                        }
                        positions[Self.join(parents + [text])] = Position(line: line, column: start - lineStart + 1)
                    }
                }
            default:
                break
            }
            index += 1
        }
    }

    private static func join(_ path: [String]) -> String { path.joined(separator: "\u{1}") }

    /// The position of the key at this path of member names (`["entities", id]`), if recorded.
    func position(of path: [String]) -> Position? { positions[Self.join(path)] }
}

@testable import Folio
import FolioCrashSupport
import Foundation
import Testing

/// The writer against a model of FORMAT.md's canonical form, written plainly (one byte at a
/// time, keys sorted by their UTF-8 bytes and looked up again), on random documents whose strings
/// and keys hold every byte that needs escaping and characters whose UTF-8 order differs from
/// their UTF-16 order.
@Suite struct JSONWriterTests {
    @Test func writesTheCanonicalForm() {
        let seed = UInt64.random(in: 1...UInt64(UInt32.max))
        var random = SplitMix64(seed: seed)
        for round in 0..<2000 {
            let value = Self.document(&random, depth: 0)
            #expect(JSONWriter.compact(value) == Model.compact(value), "round \(round), seed \(seed)")
            #expect(JSONWriter.pretty(value) == Model.pretty(value), "round \(round), seed \(seed)")
        }
        print("json writer: 2000 documents written as the model writes them (seed \(seed))")
    }

    private static let pieces = [
        "", "a", "Z", "milk", "\"", "\\", "/", "\n", "\r", "\t", "\u{8}", "\u{C}", "\u{0}", "\u{1F}", "\u{7F}",
        "é", "e\u{301}", "\u{FFFD}", "\u{1F600}", "\u{FF5E}", "日本", " ",
    ]

    private static func text(_ random: inout SplitMix64) -> String {
        (0..<Int.random(in: 0..<4, using: &random)).map { _ in pieces[random.index(pieces.count)] }.joined()
    }

    private static func document(_ random: inout SplitMix64, depth: Int) -> JSONValue {
        switch Int.random(in: 0..<(depth > 3 ? 5 : 7), using: &random) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &random))
        case 2: return .number(["0", "-1", "1.5e-7", "123456789012345678901234567890"][random.index(4)])
        case 3, 4: return .string(text(&random))
        case 5: return .array((0..<Int.random(in: 0..<4, using: &random)).map { _ in document(&random, depth: depth + 1) })
        default:
            var members: [String: JSONValue] = [:]
            for _ in 0..<Int.random(in: 0..<5, using: &random) { members[text(&random)] = document(&random, depth: depth + 1) }
            return .object(members)
        }
    }

    /// FORMAT.md's canonical form, plainly.
    private enum Model {
        static func pretty(_ value: JSONValue) -> [UInt8] { var out: [UInt8] = []; write(value, &out, 0, true); out.append(0x0A); return out }
        static func compact(_ value: JSONValue) -> [UInt8] { var out: [UInt8] = []; write(value, &out, 0, false); return out }

        static func write(_ value: JSONValue, _ out: inout [UInt8], _ indent: Int, _ pretty: Bool) {
            func newline(_ level: Int) { out.append(0x0A); out += Array(repeating: 0x20, count: level * 2) }
            switch value {
            case .null: out += Array("null".utf8)
            case .bool(let flag): out += Array((flag ? "true" : "false").utf8)
            case .number(let text): out += Array(text.utf8)
            case .string(let text): string(text, &out)
            case .array(let elements):
                if elements.isEmpty { out += Array("[]".utf8); return }
                out.append(UInt8(ascii: "["))
                for (index, element) in elements.enumerated() {
                    if index > 0 { out.append(UInt8(ascii: ",")) }
                    if pretty { newline(indent + 1) }
                    write(element, &out, indent + 1, pretty)
                }
                if pretty { newline(indent) }
                out.append(UInt8(ascii: "]"))
            case .object(let members):
                if members.isEmpty { out += Array("{}".utf8); return }
                out.append(UInt8(ascii: "{"))
                let keys = members.keys.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
                for (index, key) in keys.enumerated() {
                    if index > 0 { out.append(UInt8(ascii: ",")) }
                    if pretty { newline(indent + 1) }
                    string(key, &out)
                    out.append(UInt8(ascii: ":"))
                    if pretty { out.append(0x20) }
                    write(members[key]!, &out, indent + 1, pretty)
                }
                if pretty { newline(indent) }
                out.append(UInt8(ascii: "}"))
            }
        }

        static func string(_ text: String, _ out: inout [UInt8]) {
            out.append(UInt8(ascii: "\""))
            for byte in text.utf8 {
                switch byte {
                case 0x22: out += [0x5C, 0x22]
                case 0x5C: out += [0x5C, 0x5C]
                case 0x0A: out += Array("\\n".utf8)
                case 0x0D: out += Array("\\r".utf8)
                case 0x09: out += Array("\\t".utf8)
                case 0x08: out += Array("\\b".utf8)
                case 0x0C: out += Array("\\f".utf8)
                case 0x00..<0x20, 0x7F: out += Array(String(format: "\\u%04x", byte).utf8)
                default: out.append(byte)
                }
            }
            out.append(UInt8(ascii: "\""))
        }
    }
}

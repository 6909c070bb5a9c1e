@testable import Folio
import Foundation
import Testing

@Suite struct JSONTests {
    func parse(_ text: String) throws(JSONParser.Failure) -> JSONValue { try JSONParser.parse(Array(text.utf8)) }

    @Test(arguments: [
        ("{\"a\": 1,}", 1, 9, "expected a quoted key"),
        ("{\n  \"a\": tru\n}", 2, 8, "expected 'true'"),
        ("[1, 2", 1, 6, "unterminated array"),
        ("{\"a\": \"x\n\"}", 1, 9, "control character in string"),
        ("{\"a\": 1, \"a\": 2}", 1, 10, "duplicate key \"a\""),
        ("{\"a\": 01}", 1, 8, "leading zero"),
        ("{\"a\": \"\\q\"}", 1, 8, "invalid escape"),
        ("{} x", 1, 4, "unexpected text after the JSON value"),
        ("", 1, 1, "expected a value"),
        ("\"\\ud800\"", 1, 8, "unpaired surrogate"),
    ])
    func errorsSayWhereAndWhat(text: String, line: Int, column: Int, message: String) {
        do {
            _ = try parse(text)
            Issue.record("\(text) parsed")
        } catch {
            #expect(error.line == line && error.column == column, "\(error)")
            #expect(error.message.contains(message), "\(error.message)")
        }
    }

    @Test func deepNestingIsAnErrorNotACrash() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(throws: JSONParser.Failure.self) { try parse(deep) }
    }

    @Test func invalidUTF8IsRejected() {
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse([0x22, 0xC3, 0x28, 0x22]) }
    }

    @Test func valuesRoundTripExactly() throws {
        let text = #"{"big":12345678901234567890,"e":-1.5E+10,"emoji":"😀 \u00e9","esc":"\"\\\/\b\f\n\r\t\u0001","list":[true,false,null,{}],"zero":0.10}"#
        let value = try parse(text)
        #expect(value["big"] == .number("12345678901234567890"))
        #expect(value["emoji"] == .string("😀 é"))
        #expect(value["esc"] == .string("\"\\/\u{08}\u{0C}\n\r\t\u{01}"))
        let compact = String(decoding: JSONWriter.compact(value), as: UTF8.self)
        #expect(compact == #"{"big":12345678901234567890,"e":-1.5E+10,"emoji":"😀 é","esc":"\"\\/\b\f\n\r\t\u0001","list":[true,false,null,{}],"zero":0.10}"#)
        #expect(try parse(compact) == value)
        // Foundation agrees the output is JSON.
        #expect(throws: Never.self) { try JSONSerialization.jsonObject(with: Data(JSONWriter.pretty(value))) }
    }

    @Test func prettyFormIsCanonical() throws {
        let value = try parse(#"{"b": [1, {"z": 1, "a": []}], "a": {}, "B": "x", "ä": 1}"#)
        #expect(
            String(decoding: JSONWriter.pretty(value), as: UTF8.self) == """
                {
                  "B": "x",
                  "a": {},
                  "b": [
                    1,
                    {
                      "a": [],
                      "z": 1
                    }
                  ],
                  "ä": 1
                }

                """)
    }

    @Test func unknownFieldsMergeKeepsOnlyWhatTheTypeDoesNotKnow() throws {
        let stored = try parse(#"{"id": "1", "title": "old", "gone": 1, "extra": "keep", "nested": {"known": 1, "hand": true}}"#)
        let known = try parse(#"{"id": "1", "title": "old", "gone": 1, "nested": {"known": 1}}"#)
        let new = try parse(#"{"id": "1", "title": "new", "nested": {"known": 2}}"#)
        let merged = UnknownFields.merge(stored: stored, known: known, new: new)
        #expect(merged == (try parse(#"{"id": "1", "title": "new", "extra": "keep", "nested": {"known": 2, "hand": true}}"#)))
    }

    /// The shortcut an upsert takes (no decode and re-encode of the stored entity) when the new
    /// JSON sets every stored field: it must be exactly when the merge would change nothing,
    /// whatever the type knows. Random small objects, nested, sharing keys.
    @Test func aNewValueThatCoversTheStoredOneIsTheMerge() {
        var random = SystemRandomNumberGenerator()
        func object(_ depth: Int) -> JSONValue {
            var members: [String: JSONValue] = [:]
            for key in ["a", "b", "c", "d"] where Bool.random(using: &random) {
                members[key] =
                    depth < 2 && Int.random(in: 0..<3, using: &random) == 0 ? object(depth + 1) : .number(String(Int.random(in: 0..<3, using: &random)))
            }
            return .object(members)
        }
        var covered = 0
        for _ in 0..<5000 {
            let stored = object(0), new = object(0), known = object(0)
            let merged = UnknownFields.merge(stored: stored, known: known, new: new)
            if UnknownFields.covers(new, stored) {
                covered += 1
                #expect(merged == new, "stored \(stored), new \(new), known \(known)")
            }
            // Whenever the merge adds something, the shortcut must not be taken.
            if merged != new { #expect(!UnknownFields.covers(new, stored)) }
        }
        #expect(covered > 200)
    }

    @Test func crc32cMatchesTheStandardCheckValue() {
        #expect(CRC32C.checksum(Array("123456789".utf8)) == 0xE306_9283)
        let long = (0..<1000).map { UInt8($0 % 251) }
        var split = CRC32C.checksum(Array(long[0..<333]))
        split = CRC32C.checksum(Array(long[333...]), seed: split)
        #expect(split == CRC32C.checksum(long))
    }
}

@testable import Folio
import Foundation
import Testing

/// A stored date's text survives reading and writing the entity back: without rounding to the
/// millisecond, about half of all `.SSS` values came back 1 ms earlier after a read-modify-write.
@Suite struct DateRoundTripTests {
    static let texts = (0..<1000).map { String(format: "2026-11-22T12:49:14.%03dZ", $0) } + [
        "1970-01-01T00:00:00.000Z", "1969-12-31T23:59:59.999Z", "0001-01-01T00:00:00.001Z", "9999-12-31T23:59:59.999Z",
    ]

    @Test func everyMillisecondDecodesAndEncodesToTheSameText() throws {
        let coder = EntityCoder()
        var moved: [String] = []
        for text in Self.texts {
            let json = try JSONParser.parse(Array(#"{"id": "6F9619FF-8B86-D011-B42D-00C04FC964FF", "title": "t", "date": "2026-11-22", "done": false, "priority": 0, "createdAt": "\#(text)", "updatedAt": "\#(text)"}"#.utf8))
            let again = try coder.encode(coder.decode(Todo.self, from: json, id: "x", path: "todos"))
            if again["createdAt"]?.stringValue != text { moved.append("\(text) -> \(again["createdAt"]?.stringValue ?? "nil")") }
        }
        #expect(moved.isEmpty, "\(moved.count) dates moved: \(moved.prefix(5))")
        // A fresh date is rounded to the nearest millisecond, not truncated.
        #expect(EntityCoder.format(Date(timeIntervalSince1970: 1_795_351_754.8286)) == "2026-11-22T12:49:14.829Z")
        #expect(EntityCoder.format(Date(timeIntervalSince1970: .infinity)) == nil)
    }

    @Test func aReadModifyWriteKeepsTheStoredDates() async throws {
        let folder = TemporaryFolder()
        let store = try await Store.open(at: folder.url, configuration: .testing())
        let parse = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        // Every 7th millisecond: enough to meet the ones that used to move, few enough to be quick.
        let texts = stride(from: 0, to: 1000, by: 7).map { Self.texts[$0] }
        let todos = try texts.map { text in
            var item = todo(text, on: "2026-11-22")
            item.createdAt = try parse.parse(text)
            return item
        }
        try await store.write { tx in for item in todos { try tx.upsert(item) } }
        let stored = try await store.fetch(Query<Todo>(.day("2026-11-22")))
        try await store.write { tx in
            for var item in stored {
                item.done = true
                try tx.upsert(item)
            }
        }
        try await store.close()
        let file = try folder.text("todos/2026-11/2026-11-22.json")
        let missing = texts.filter { !file.contains("\"createdAt\": \"\($0)\"") }
        #expect(missing.isEmpty, "\(missing.count) dates changed: \(missing.prefix(5))")
    }
}

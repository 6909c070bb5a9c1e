@testable import Folio
import FolioCrashSupport
import Foundation
import Testing

/// A stored date's text survives reading and writing the entity back: without rounding to the
/// millisecond, about half of all `.SSS` values came back 1 ms earlier after a read-modify-write.
@Suite struct DateRoundTripTests {
    static let texts =
        (0..<1000).map { String(format: "2026-11-22T12:49:14.%03dZ", $0) } + [
            "1970-01-01T00:00:00.000Z", "1969-12-31T23:59:59.999Z", "0001-01-01T00:00:00.001Z", "9999-12-31T23:59:59.999Z",
        ]

    @Test func everyMillisecondDecodesAndEncodesToTheSameText() throws {
        let coder = EntityCoder()
        var moved: [String] = []
        for text in Self.texts {
            let json = try JSONParser.parse(
                Array(
                    #"{"id": "6F9619FF-8B86-D011-B42D-00C04FC964FF", "title": "t", "date": "2026-11-22", "done": false, "priority": 0, "createdAt": "\#(text)", "updatedAt": "\#(text)"}"#
                        .utf8))
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

/// Folio's own date form is parsed by hand (ISO8601Date.swift): the same instant, to the
/// millisecond, as Foundation's ISO 8601 format style, for random dates from year 1600 to 9999;
/// and anything it does not handle (earlier years, which the format style counts in the Julian
/// calendar, other forms) is left to the format style.
@Suite struct ISO8601DateTests {
    @Test func parsesAsTheFormatStyleDoes() throws {
        let seed = ProcessInfo.processInfo.environment["FOLIO_DATE_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64(UInt32.max))
        var random = SplitMix64(seed: seed)
        let withFraction = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        for _ in 0..<2_000 {
            let milliseconds = Int64(random.next() % 265_046_774_399_000) - 11_676_096_000_000   // 1600-01-01 ... 9999-12-31
            let date = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
            let text = try #require(EntityCoder.format(date))
            let fast = try #require(ISO8601Date.parse(text), "seed \(seed): \(text)")
            let slow = try withFraction.parse(text)
            #expect(abs(fast.timeIntervalSince1970 - slow.timeIntervalSince1970) < 0.0005, "seed \(seed): \(text)")
            #expect(EntityCoder.format(fast) == text, "seed \(seed): \(text)")
            let whole = String(text.dropLast(5)) + "Z"
            #expect(ISO8601Date.parse(whole) == (try Date.ISO8601FormatStyle().parse(whole)), "seed \(seed): \(whole)")
        }
        for text in [
            "2026-02-29T00:00:00.000Z", "2026-13-01T00:00:00Z", "2026-11-22T24:00:00Z", "2026-11-22T09:30:00+01:00",
            "2026-11-22T09:30:00.5Z", "2026-11-22 09:30:00Z", "0000-01-01T00:00:00Z", "２０２６-11-22T09:30:00Z", "1582-10-15T00:00:00Z",
            "1599-12-31T23:59:59.999Z",
        ] {
            #expect(ISO8601Date.parse(text) == nil, "\(text)")
        }
        print("ISO 8601 dates: seed \(seed), 2000 dates parsed as the format style parses them")
    }

    /// Folio's date form is written by hand for years 1600 to 9999 (``ISO8601Date/format(milliseconds:)``):
    /// the same text as Foundation's format style, for random instants and the edges of every day
    /// and of the range; outside it the format style writes it.
    @Test func formatsAsTheFormatStyleDoes() throws {
        let seed = ProcessInfo.processInfo.environment["FOLIO_DATE_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64(UInt32.max))
        var random = SplitMix64(seed: seed)
        let low: Int64 = -11_676_096_000_000, high: Int64 = 253_402_300_800_000   // 1600-01-01, 10000-01-01
        var instants: [Int64] = [low, low + 1, high - 1, 0, -1, 1, 951_782_400_000 - 1, 951_782_400_000, 4_107_542_400_000]
        for _ in 0..<3_000 {
            let day = Int64(random.next() % UInt64((high - low) / 86_400_000)) * 86_400_000 + low
            instants.append(contentsOf: [day, day - 1, day + Int64(random.next() % 86_400_000)])
        }
        for milliseconds in instants where milliseconds >= low && milliseconds < high {
            let fast = try #require(ISO8601Date.format(milliseconds: milliseconds), "seed \(seed): \(milliseconds)")
            #expect(fast == EntityCoder.formatWithStyle(Double(milliseconds)), "seed \(seed): \(milliseconds)")
        }
        #expect(ISO8601Date.format(milliseconds: low - 1) == nil && ISO8601Date.format(milliseconds: high) == nil)
        #expect(EntityCoder.format(Date(timeIntervalSince1970: -12_000_000_000)) == EntityCoder.formatWithStyle(-12_000_000_000_000))
        print("ISO 8601 dates: seed \(seed), \(instants.count) instants written as the format style writes them")
    }
}

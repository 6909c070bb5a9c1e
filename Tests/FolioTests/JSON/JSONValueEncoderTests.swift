@testable import Folio
import FolioCrashSupport
import Foundation
import Testing

/// A record with every kind of value the direct encoder meets, and some it leaves to JSONEncoder.
private struct Shapes: Encodable {
    enum Kind: String, Encodable { case calm, busy }
    enum Payload: Encodable { case none, pair(Int, String), labeled(x: Int8, y: [Bool]) }
    struct Inner: Encodable { var name: String; var tags: [String]; var when: Date? }

    /// Writes through every container: nested unkeyed and keyed ones, `nil`, and a nested
    /// container asked for twice under one key (its members add up, as in JSONEncoder).
    struct Custom: Encodable {
        enum Key: String, CodingKey { case list, nested, a, b }
        var a: Int
        var b: String
        var twice: Bool

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Key.self)
            var list = container.nestedUnkeyedContainer(forKey: .list)
            try list.encode(a)
            try list.encodeNil()
            var inList = list.nestedContainer(keyedBy: Key.self)
            try inList.encode(b, forKey: .b)
            var nested = container.nestedContainer(keyedBy: Key.self, forKey: .nested)
            try nested.encode(a, forKey: .a)
            if twice {
                var again = container.nestedContainer(keyedBy: Key.self, forKey: .nested)
                try again.encode(b, forKey: .b)
            }
            try container.encode(b, forKey: .b)
            try container.encode(a, forKey: .b)   // encoded twice: the last one stays
        }
    }

    var text: String
    var flag: Bool
    var count: Int
    var small: Int8
    var big: UInt64
    var signed: Int64
    var when: Date
    var note: String?
    var maybe: Int?
    var kind: Kind
    var payload: Payload
    var inner: Inner
    var list: [Inner]
    var table: [String: Int]
    var byNumber: [Int: String]
    var uuid: UUID
    var custom: Custom
    var ratio: Double?
    var link: URL?
}

/// The direct encoder (JSONValueEncoder) against `JSONEncoder` as EntityCoder sets it up, parsed:
/// whenever the direct encoder answers, it must give the same JSON value. The model is
/// `JSONEncoder` itself.
@Suite struct JSONValueEncoderTests {
    @Test func answersOnlyWhatJSONEncoderAnswers() throws {
        let seed = UInt64.random(in: 1...UInt64(UInt32.max))
        var random = SplitMix64(seed: seed)
        let coder = EntityCoder()
        var direct = 0, fellBack = 0, bothFailed = 0
        for round in 0..<2000 {
            let value = Self.record(&random)
            let reference: JSONValue?
            do { reference = try coder.encodeThroughJSONEncoder(value) } catch { reference = nil }
            let fast: JSONValue?
            do { fast = try JSONValueEncoder.encode(value) } catch { fast = nil }
            if let fast {
                direct += 1
                #expect(
                    fast == reference,
                    "round \(round), seed \(seed): \(String(decoding: JSONWriter.compact(fast), as: UTF8.self)) against \(reference.map { String(decoding: JSONWriter.compact($0), as: UTF8.self) } ?? "an error")"
                )
            } else if reference != nil {
                fellBack += 1
            } else {
                bothFailed += 1
            }
            // Through EntityCoder: the same answer as JSONEncoder, whichever encoder gave it.
            let viaCoder: JSONValue?
            do { viaCoder = try coder.encodeValue(value) } catch { viaCoder = nil }
            #expect(viaCoder == reference, "round \(round), seed \(seed)")
        }
        #expect(direct > 500 && fellBack > 100 && bothFailed > 5, "\(direct) direct, \(fellBack) fell back, \(bothFailed) failed (seed \(seed))")
        print("direct encoder: \(direct) encoded as JSONEncoder does, \(fellBack) left to JSONEncoder, \(bothFailed) refused by both (seed \(seed))")
    }

    private static func record(_ random: inout SplitMix64) -> Shapes {
        func pick<T>(_ choices: [T]) -> T { choices[Int.random(in: 0..<choices.count, using: &random)] }
        func sometimes(_ oneIn: Int) -> Bool { Int.random(in: 0..<oneIn, using: &random) == 0 }
        func text() -> String { pick(["", "milk", "café", "cafe\u{301}", "line\nbreak", "quote \" and \\ slash /", "\u{1F600}", "tab\t", "\u{0}"]) }
        func date() -> Date {
            if sometimes(30) { return Date(timeIntervalSince1970: .infinity) }
            let milliseconds = pick([
                Int64.random(in: -20_000_000_000_000...300_000_000_000_000, using: &random),
                Int64.random(in: 0...2_000_000_000_000, using: &random), 0, -1, 999,
            ])
            return Date(timeIntervalSince1970: Double(milliseconds) / 1000 + pick([0, 0.0004, 0.0006]))
        }
        func inner() -> Shapes.Inner {
            Shapes.Inner(name: text(), tags: (0..<Int.random(in: 0..<3, using: &random)).map { _ in text() }, when: sometimes(2) ? nil : date())
        }
        return Shapes(
            text: text(), flag: Bool.random(using: &random), count: pick([0, -1, Int.max, Int.min, Int.random(in: -1000...1000, using: &random)]),
            small: Int8.random(in: .min ... .max, using: &random), big: pick([0, UInt64.max, UInt64.random(in: 0 ... .max, using: &random)]),
            signed: Int64.random(in: .min ... .max, using: &random), when: date(),
            note: sometimes(2) ? nil : text(), maybe: sometimes(2) ? nil : Int.random(in: -5...5, using: &random),
            kind: pick([.calm, .busy]),
            payload: pick([
                .none, .pair(Int.random(in: -9...9, using: &random), text()), .labeled(x: Int8.random(in: -9...9, using: &random), y: [true, false]),
            ]),
            inner: inner(), list: (0..<Int.random(in: 0..<3, using: &random)).map { _ in inner() },
            table: Dictionary(uniqueKeysWithValues: (0..<Int.random(in: 0..<3, using: &random)).map { ("k\($0)" + text(), $0) }),
            byNumber: Dictionary(uniqueKeysWithValues: (0..<Int.random(in: 0..<3, using: &random)).map { ($0 - 1, text()) }),
            uuid: random.uuid(), custom: Shapes.Custom(a: Int.random(in: -9...9, using: &random), b: text(), twice: Bool.random(using: &random)),
            ratio: sometimes(4) ? pick([0.1, 1.0, -2.5e-7, .nan]) : nil,
            link: sometimes(8) ? URL(string: "https://example.com/a?b=c") : nil)
    }
}

@testable import Folio
import FolioCrashSupport
import Foundation
import Testing

/// A record with every kind of field the direct decoder meets.
private struct Everything: Codable, Equatable {
    enum Mood: String, Codable { case calm, busy }
    enum Shape: Codable, Equatable { case dot, line(length: Int), label(String, Bool) }
    struct Inner: Codable, Equatable { var name: String; var weight: Double?; var here: PathEcho? }
    /// Its coding path, as the decoder tells it.
    struct PathEcho: Codable, Equatable {
        var path: String
        init(from decoder: any Decoder) throws { path = decoder.codingPath.map(\.stringValue).joined(separator: "/") }
        func encode(to encoder: any Encoder) throws {}
    }

    var text: String
    var flag: Bool
    var count: Int
    var small: Int8
    var unsigned: UInt16
    var ratio: Double
    var when: Date
    var numbers: [Int]
    var table: [String: Double]
    var note: String?
    var inner: Inner
    var mood: Mood
    var shape: Shape
    var uuid: UUID
    var grid: [[Bool]]
    var byNumber: [Int: String]
    var maybeCount: Int?
    var maybeFlag: Bool?
    var maybeRatio: Double?
    var maybeWhen: Date?
    var maybeSmall: Int8?
    var echoes: [PathEcho]
}

/// The direct decoder (JSONValueDecoder) against `JSONDecoder` as EntityCoder sets it up, on
/// random JSON that is mostly right and often subtly wrong (`1.0` for an Int, a number too large,
/// a missing key, null, a date in another form, a string for a number): whenever the direct decoder
/// answers, `JSONDecoder` must give the same value. The model is `JSONDecoder` itself.
@Suite struct JSONValueDecoderTests {
    @Test func answersOnlyWhatJSONDecoderAnswers() throws {
        let seed = UInt64.random(in: 1...UInt64(UInt32.max))
        var random = SplitMix64(seed: seed)
        let coder = EntityCoder()
        var direct = 0, fellBack = 0, bothFailed = 0
        for round in 0..<3000 {
            let json = Self.record(&random)
            let reference: Everything?
            do { reference = try coder.decoder.decode(Everything.self, from: Data(JSONWriter.compact(json))) } catch { reference = nil }
            let fast: Everything?
            do { fast = try JSONValueDecoder.decode(Everything.self, from: json) } catch { fast = nil }
            if let fast {
                direct += 1
                #expect(fast == reference, "round \(round), seed \(seed): \(String(decoding: JSONWriter.compact(json), as: UTF8.self))")
            } else if reference != nil {
                fellBack += 1
            } else {
                bothFailed += 1
            }
            // Through EntityCoder: the same answer as JSONDecoder, whichever decoder gave it.
            let viaCoder: Everything?
            do { viaCoder = try coder.decodeValue(Everything.self, from: json) } catch { viaCoder = nil }
            #expect(viaCoder == reference, "round \(round), seed \(seed)")
        }
        #expect(direct > 300 && fellBack > 20 && bothFailed > 20, "\(direct) direct, \(fellBack) fell back, \(bothFailed) failed (seed \(seed))")
        print("direct decoder: \(direct) decoded as JSONDecoder does, \(fellBack) left to JSONDecoder, \(bothFailed) refused by both (seed \(seed))")
    }

    static func record(_ random: inout SplitMix64) -> JSONValue {
        func pick<T>(_ choices: [T]) -> T { choices[Int.random(in: 0..<choices.count, using: &random)] }
        func odd() -> Bool { Int.random(in: 0..<40, using: &random) == 0 }
        func number(_ plain: String) -> JSONValue {
            odd()
                ? pick([
                    .number("1.0"), .number("1e2"), .number("-0"), .number("99999999999999999999"), .string("7"), .null, .bool(true), .number("300"),
                    .number("-1"),
                ])
                : .number(plain)
        }
        func string(_ plain: String) -> JSONValue { odd() ? pick([.number("1"), .null, .bool(false), .array([])]) : .string(plain) }
        var members: [String: JSONValue] = [
            "text": string(pick(["", "milk", "café", "cafe\u{301}", "line\nbreak"])),
            "flag": odd() ? pick([.number("1"), .string("true"), .null]) : .bool(Bool.random(using: &random)),
            "count": number(String(Int.random(in: -1000...1000, using: &random))),
            "small": number(String(Int.random(in: -128...127, using: &random))),
            "unsigned": number(String(Int.random(in: 0...65535, using: &random))),
            "ratio": odd()
                ? pick([.number("1e400"), .number("-1e-400"), .string("1.5"), .number("0.1")])
                : .number(pick(["0.5", "-2.25", "3", "1e-3", "123456.789", "0.30000000000000004"])),
            "when": odd()
                ? pick([
                    .string("2026-11-22T09:30:00Z"), .string("2026-11-22T09:30:00.5+02:00"), .string("2026-11-22"), .number("0"),
                    .string("2026-13-40T00:00:00.000Z"),
                ])
                : .string(pick(["2026-11-22T09:30:00.828Z", "1970-01-01T00:00:00.000Z", "2031-07-01T23:59:59.999Z"])),
            "numbers": .array((0..<Int.random(in: 0..<4, using: &random)).map { _ in number(String(Int.random(in: -9...9, using: &random))) }),
            "table": .object(Dictionary(uniqueKeysWithValues: (0..<Int.random(in: 0..<3, using: &random)).map { ("k\($0)", number("\($0).5")) })),
            "inner": .object(["name": string("in")].merging(odd() ? [:] : ["weight": pick([.null, .number("2.5"), .string("x")])]) { $1 }),
            "mood": string(odd() ? "asleep" : pick(["calm", "busy"])),
            "shape": odd()
                ? .object(["line": .object([:])])
                : pick([
                    .object(["dot": .object([:])]),
                    .object(["line": .object(["length": number("4")])]),
                    .object(["label": .object(["_0": string("x"), "_1": .bool(true)])]),
                ]),
            "uuid": string(odd() ? "not-a-uuid" : pick(["E621E1F8-C36C-495A-93FC-0C247A3E6E5F", "e621e1f8-c36c-495a-93fc-0c247a3e6e5f"])),
            "grid": .array([.array([.bool(true), odd() ? .null : .bool(false)])]),
            "byNumber": .object(odd() ? ["x": .string("a")] : ["1": string("one"), "-2": .string("minus two")]),
        ]
        if Int.random(in: 0..<3, using: &random) == 0 { members["note"] = pick([.null, .string("n"), .number("3")]) }
        if Bool.random(using: &random) { members["maybeCount"] = odd() ? .null : number("12") }
        if Bool.random(using: &random) { members["maybeFlag"] = odd() ? .number("0") : pick([.null, .bool(true)]) }
        if Bool.random(using: &random) { members["maybeRatio"] = odd() ? .string("x") : pick([.null, .number("2.5")]) }
        if Bool.random(using: &random) { members["maybeWhen"] = odd() ? .string("yesterday") : pick([.null, .string("2026-11-22T09:30:00.828Z")]) }
        if Bool.random(using: &random) { members["maybeSmall"] = odd() ? .number("300") : pick([.null, number("12")]) }
        members["echoes"] = .array((0..<Int.random(in: 0..<3, using: &random)).map { _ in pick([.null, .string("e"), .object([:])]) })
        if Bool.random(using: &random), case .object(var inner)? = members["inner"] {
            inner["here"] = pick([.string("h"), .object(["x": .null])])
            members["inner"] = .object(inner)
        }
        if odd() { members[pick(Array(members.keys).sorted())] = nil }
        if odd() { members["extra"] = .string("unknown fields are ignored") }
        return .object(members)
    }
}

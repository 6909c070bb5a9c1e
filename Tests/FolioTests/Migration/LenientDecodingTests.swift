@testable import Folio
import FolioCrashSupport
import Foundation
import Testing

/// A diary app's new model reading the old version's files, with no migration: every entity that
/// still decodes is served; each one that does not is reported with its file, line, column and
/// field; none of them makes a query, a fetch of everything, a `get` of a neighbour or an
/// observation fail; and an upsert over one keeps its stored fields.
@Suite struct LenientDecodingTests {
    /// The new model: `mood` became an Int, `weather` is new and optional (decodes from old data).
    struct Entry: Entity, Equatable {
        static let collection = "entries"
        static let partitioning = Partitioning<Entry>.day(\.date)
        var id: String
        var date: String
        var text: String
        var mood: Int
        var weather: String?
    }

    /// How the test writes an old entity, and what the spec (Swift's synthesized Decodable) says
    /// of it: decodable, or the field at fault.
    enum Shape: CaseIterable {
        case good, goodWithUnknownField, moodAsString, moodMissing, textMissing, textAsNumber

        var faultyField: String? {
            switch self {
            case .good, .goodWithUnknownField: nil
            case .moodAsString, .moodMissing: "mood"
            case .textMissing, .textAsNumber: "text"
            }
        }

        func fields(id: String, date: String) -> [(String, String)] {
            var fields = [("date", "\"\(date)\""), ("id", "\"\(id)\""), ("secret", "\"kept-\(id)\"")]
            switch self {
            case .good: fields += [("mood", "3"), ("text", "\"hello\"")]
            case .goodWithUnknownField: fields += [("mood", "2"), ("tags", "[\"a\"]"), ("text", "\"hi\"")]
            case .moodAsString: fields += [("mood", "\"3\""), ("text", "\"old mood\"")]
            case .moodMissing: fields += [("text", "\"no mood\"")]
            case .textMissing: fields += [("mood", "1")]
            case .textAsNumber: fields += [("mood", "1"), ("text", "42")]
            }
            return fields.sorted { $0.0 < $1.0 }
        }
    }

    @Test func oneBadEntityNeverHidesItsNeighbours() async throws {
        let seed = UInt64.random(in: 1...UInt64.max)
        var random = SplitMix64(seed: seed)
        let folder = TemporaryFolder()
        let days = (1...6).map { String(format: "2026-03-%02d", $0) }
        // The model: every entity's shape, and where its text sits in its file.
        var shapes: [String: Shape] = [:]
        var positions: [String: (path: String, line: Int, column: Int)] = [:]
        try folder.write("{\n  \"format\": 1,\n  \"store\": \"S\"\n}\n", to: "folio.json")
        for day in days {
            var lines = ["{", "  \"entities\": {"]
            let count = Int.random(in: 1...5, using: &random)
            let path = "entries/2026-03/\(day).json"
            for index in 0..<count {
                let id = "\(day)-\(index)"
                let shape = Shape.allCases.randomElement(using: &random)!
                shapes[id] = shape
                positions[id] = (path, lines.count + 1, 5)
                lines.append("    \"\(id)\": {")
                let fields = shape.fields(id: id, date: day)
                for (offset, (key, value)) in fields.enumerated() {
                    if key == shape.faultyField { positions[id] = (path, lines.count + 1, 7) }
                    lines.append("      \"\(key)\": \(value)" + (offset < fields.count - 1 ? "," : ""))
                }
                lines.append("    }" + (index < count - 1 ? "," : ""))
            }
            lines += ["  }", "}"]
            try folder.write(lines.joined(separator: "\n") + "\n", to: path)
        }
        let good = shapes.filter { $0.value.faultyField == nil }.keys.sorted()
        let bad = shapes.filter { $0.value.faultyField != nil }.keys.sorted()
        let log = LogRecorder()
        let store = try await Store.open(at: folder.url, configuration: .testing(log: log.handler))

        // Every query serves exactly the entities that decode.
        #expect(try await store.fetch(Query<Entry>()).map(\.id) == good, "seed \(seed)")
        for day in days {
            #expect(try await store.fetch(Query<Entry>(.day(day))).map(\.id) == good.filter { $0.hasPrefix(day) }, "seed \(seed)")
        }
        // Each other one is listed, located at its faulty field (or the entity, for a missing one).
        let listed = try await store.undecodableEntities(Entry.self)
        #expect(listed.map(\.id) == bad, "seed \(seed)")
        for entity in listed {
            let shape = shapes[entity.id]!, expected = positions[entity.id]!
            #expect(entity.field == shape.faultyField, "seed \(seed): \(entity)")
            #expect(
                entity.path == expected.path && entity.line == expected.line && entity.column == expected.column,
                "seed \(seed): \(entity) expected \(expected)")
        }
        #expect(log.messages.filter { $0.level == .error && $0.text.contains("does not decode") }.count == bad.count, "each is logged once")
        // `get` serves the good ones, and names the bad one's field and place.
        for id in good { #expect(try await store.get(Entry.self, id: id)?.id == id) }
        for id in bad {
            do {
                _ = try await store.get(Entry.self, id: id)
                Issue.record("get(\(id)) should throw decodingFailed")
            } catch let error as FolioError {
                #expect(
                    error.code == .decodingFailed && error.line == positions[id]!.line && error.message.contains(shapes[id]!.faultyField!),
                    "seed \(seed): \(error)")
            }
        }
        // An observation starts with the good ones and keeps going after writes.
        var results = store.observe(Query<Entry>()).makeAsyncIterator()
        #expect(try await results.next()?.map(\.id) == good)
        let added = Entry(id: "2026-03-01-new", date: "2026-03-01", text: "new", mood: 5)
        try await store.write { tx in try tx.upsert(added) }
        #expect(try await results.next()?.map(\.id) == (good + [added.id]).sorted())

        // An upsert over an undecodable entity keeps every stored field it does not set.
        if let victim = bad.first {
            let day = String(victim.prefix(10))
            try await store.write { tx in try tx.upsert(Entry(id: victim, date: day, text: "rewritten", mood: 4)) }
            try await store.close()
            let file = try JSONSerialization.jsonObject(with: folder.bytes("entries/2026-03/\(day).json")) as! [String: Any]
            let stored = (file["entities"] as! [String: Any])[victim] as! [String: Any]
            #expect(stored["secret"] as? String == "kept-\(victim)", "seed \(seed): \(stored)")
            #expect(stored["text"] as? String == "rewritten" && stored["mood"] as? Int == 4)
        } else {
            try await store.close()
        }
        print("lenient decoding test: seed \(seed), \(good.count) decodable, \(bad.count) reported")
    }
}

@testable import Folio
import FolioCrashSupport
import Foundation
import Testing

/// A note with a renamed field, an optional one, numbers and a date: what a field-level filter
/// must read right (FieldFilter, FieldProbe, FieldScanner).
struct ScanNote: Entity, Equatable {
    static let collection = "scanNotes"
    static let partitioning = Partitioning<ScanNote>.day(\.day)

    var id: String
    var day: String
    var title: String
    var label: String
    var done: Bool
    var priority: Int
    var score: Double
    var remark: String?
    var created: Date

    enum CodingKeys: String, CodingKey {
        case id, day, title, label = "name", done, priority, score, remark, created
    }
}

/// A note whose decoding computes its properties: `open` is the opposite of the file's `done`,
/// `heading` is `title` or else `name`. No field may be read for them.
struct ComputedNote: Entity, Equatable {
    static let collection = "computedNotes"
    static let partitioning = Partitioning<ComputedNote>.day(\.day)

    var id: String
    var day: String
    var open: Bool
    var heading: String

    enum CodingKeys: String, CodingKey { case id, day, done, title, name }

    init(id: String, day: String, open: Bool, heading: String) {
        (self.id, self.day, self.open, self.heading) = (id, day, open, heading)
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        day = try container.decode(String.self, forKey: .day)
        open = try !container.decode(Bool.self, forKey: .done)
        let title = try container.decode(String.self, forKey: .title)
        heading = title.isEmpty ? try container.decode(String.self, forKey: .name) : title
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(day, forKey: .day)
        try container.encode(!open, forKey: .done)
        try container.encode(heading, forKey: .title)
        try container.encode(heading, forKey: .name)
    }
}

/// Queries over many partitions evaluate their predicate on the files' fields and decode only
/// what matches. The model: the entities written (through the store and by hand), filtered by the
/// predicate's own `evaluate`, in partition then id order — what `Query` promises.
@Suite struct FieldFilterTests {
    static let words = ["milk", "Milk", "café", "cafe\u{301}", "\"quoted\"", "back\\slash", "tab\there", "ü", "", "line\nbreak"]

    static func randomNote(_ random: inout SplitMix64, day: String, number: Int) -> ScanNote {
        let word = words[random.index(words.count)]
        let title = ["buy", "call", "walk"][random.index(3)] + (random.index(3) == 0 ? " " + word : "") + " \(number)"
        return ScanNote(
            id: String(format: "n%03d", random.index(1000)) + (random.index(2) == 0 ? "é" : ""), day: day, title: title,
            label: words[random.index(words.count)], done: random.index(2) == 0,
            priority: random.index(7) - 2, score: Double(random.index(200)) / 8 - 5,
            remark: random.index(3) == 0 ? nil : words[random.index(words.count)],
            created: Date(timeIntervalSince1970: 1_700_000_000 + Double(random.index(1_000_000))))
    }

    /// The predicates of the test, each with its constants drawn from the seed, and whether it
    /// can be evaluated on fields.
    static func predicates(_ random: inout SplitMix64) -> [(name: String, predicate: Predicate<ScanNote>, onFields: Bool)] {
        let word = words[random.index(words.count)], other = words[random.index(words.count)]
        let number = random.index(7) - 2, score = Double(random.index(200)) / 8 - 5, day = "2031-01-\(10 + random.index(20))"
        return [
            ("title contains \(word.debugDescription) and not done", #Predicate { $0.title.contains(word) && !$0.done }, true),
            ("priority > \(number) or score <= \(score)", #Predicate { $0.priority > number || $0.score <= score }, true),
            ("name == \(other.debugDescription) or title starts with it", #Predicate { $0.label == other || $0.title.starts(with: other) }, true),
            ("day >= \(day) and priority != \(number)", #Predicate { $0.day >= day && $0.priority != number }, true),
            ("done == true and priority < 2", #Predicate { $0.done == true && $0.priority < 2 }, true),
            ("remark == nil or done (optional: decoded)", #Predicate { $0.remark == nil || $0.done }, false),
        ]
    }

    @Test func queriesMatchTheModelWithWritesHandEditsAndUncheckpointedChanges() async throws {
        let seed = SplitMix64.seed(replaying: "FOLIO_FIELD_FILTER_SEED")
        var random = SplitMix64(seed: seed)
        let folder = TemporaryFolder()
        var model: [String: ScanNote] = [:]   // "day/id" → note
        var configuration = Store.Configuration()
        configuration.durability = .relaxed
        configuration.checkpointDelay = .seconds(3600)
        var checked = 0, scannedWithoutLoading = 0, handEdits = 0

        for phase in 0..<4 {
            configuration.partitionCacheBudget = [0, 4096, 64 << 20][random.index(3)]
            let store = try await Store.open(at: folder.url, configuration: configuration)
            // Writes, checkpointed, then (in later phases) some left in the journal only.
            for pass in 0..<2 {
                // Drawn first, then written: the transaction's closure runs elsewhere.
                var upserts: [ScanNote] = [], deletes: [String] = []
                for _ in 0..<(phase == 0 ? 120 : 25) {
                    let day = "2031-01-\(10 + random.index(20))"
                    let note = Self.randomNote(&random, day: day, number: random.index(100))
                    if random.index(6) == 0, let victim = model.keys.sorted().randomElement(using: &random) {
                        deletes.append(model[victim]!.id)
                        upserts.removeAll { $0.id == model[victim]!.id }
                        model[victim] = nil
                    } else {
                        model = model.filter { $0.value.id != note.id }
                        upserts.removeAll { $0.id == note.id }
                        deletes.removeAll { $0 == note.id }
                        upserts.append(note)
                        model["\(day)/\(note.id)"] = note
                    }
                }
                try await store.write { [upserts, deletes] tx in
                    for id in deletes { _ = try tx.delete(ScanNote.self, id: id) }
                    for note in upserts { try tx.upsert(note) }
                }
                if pass == 0 || phase == 0 { try await store.checkpoint() }
            }
            // Queries while the last transactions are in the journal only.
            for (name, predicate, _) in Self.predicates(&random) {
                let expected = try model.values.filter { try predicate.evaluate($0) }
                    .sorted { $0.day != $1.day ? $0.day < $1.day : $0.id.utf8.lexicographicallyPrecedes($1.id.utf8) }
                let found = try await store.fetch(Query(.all, where: predicate))
                #expect(found == expected, "phase \(phase), \(name) before the checkpoint, seed \(seed)")
                checked += 1
            }
            try await store.close()

            // A person edits a few files (python's json: escapes differ from Folio's writer).
            if phase > 0 {
                for key in model.keys.sorted().shuffled(using: &random).prefix(3) {
                    let note = model[key]!
                    let title = "edited " + Self.words[random.index(Self.words.count)]
                    try Self.edit(folder.url.appendingPathComponent("scanNotes/2031-01/\(note.day).json"), id: note.id, title: title)
                    model[key]!.title = title
                    handEdits += 1
                }
            }

            // Each predicate in a fresh store (nothing in memory) and again in the same one.
            let reopened = try await Store.open(at: folder.url, configuration: configuration)
            for (name, predicate, onFields) in Self.predicates(&random) {
                let expected = try model.values.filter { try predicate.evaluate($0) }
                    .sorted { $0.day != $1.day ? $0.day < $1.day : $0.id.utf8.lexicographicallyPrecedes($1.id.utf8) }
                let before = await reopened.cacheFootprint().partitionsScanned
                let found = try await reopened.fetch(Query(.all, where: predicate))
                let scanned = await reopened.cacheFootprint().partitionsScanned - before
                #expect(found == expected, "phase \(phase), \(name), seed \(seed): \(found.count) found, \(expected.count) expected")
                if !onFields { #expect(scanned == 0, "\(name) cannot be read from fields, seed \(seed)") }
                scannedWithoutLoading += scanned
                let again = try await reopened.fetch(Query(.all, where: predicate))
                #expect(again == expected, "phase \(phase), \(name) again, seed \(seed)")
                checked += 2
            }
            try await reopened.close()
        }
        #expect(scannedWithoutLoading > 0, "no partition was read by fields (seed \(seed))")
        print("field filter: \(checked) queries as the model says, \(scannedWithoutLoading) partitions read by fields, \(handEdits) hand edits (seed \(seed))")
    }

    @Test func computedPropertiesAreNeverReadFromFields() async throws {
        let folder = TemporaryFolder()
        let store = try await Store.open(at: folder.url)
        try await store.write { tx in
            for day in 10..<30 {
                try tx.upsert(ComputedNote(id: "a\(day)", day: "2031-01-\(day)", open: day % 2 == 0, heading: "h\(day)"))
            }
        }
        try await store.close()
        let reopened = try await Store.open(at: folder.url)
        let open = try await reopened.fetch(Query(.all, where: #Predicate<ComputedNote> { $0.open && $0.heading != "h12" }))
        #expect(open.map(\.id) == (10..<30).filter { $0 % 2 == 0 && $0 != 12 }.map { "a\($0)" })
        #expect(await reopened.cacheFootprint().partitionsScanned == 0)
        try await reopened.close()
    }

    /// The probe names the field each property is decoded from, following a rename, and names
    /// none for a computed property: a query over `label` must read `"name"`, not fall back to
    /// decoding (which would hide a probe that mapped nothing) nor read a wrong field.
    @Test func theProbeFollowsRenamesAndRefusesComputedProperties() throws {
        let coder = EntityCoder()
        var random = SplitMix64(seed: 7)
        let note = Self.randomNote(&random, day: "2031-01-10", number: 1)
        let encoded = try coder.encode(note)
        guard case .object(let sample) = encoded else { Issue.record("not an object"); return }
        let predicate = #Predicate<ScanNote> { $0.label == "x" && $0.title != "" && !$0.done && $0.priority > 1 && $0.score < 2 }
        let compiled: FieldFilter? = FieldFilter.compile(predicate)
        let filter = try #require(compiled)
        let keys = try #require(FieldProbe.keys(ScanNote.self, keyPaths: filter.keyPaths, sample: sample, coder: coder))
        #expect(keys[\ScanNote.label] == "name")
        #expect(keys[\ScanNote.title] == "title")
        #expect(keys[\ScanNote.done] == "done")
        #expect(keys[\ScanNote.priority] == "priority")
        #expect(keys[\ScanNote.score] == "score")
        #expect(filter.reading(keys)?.keys == ["name", "title", "done", "priority", "score"])

        let computed = try coder.encode(ComputedNote(id: "a", day: "2031-01-10", open: true, heading: "h"))
        guard case .object(let computedSample) = computed else { Issue.record("not an object"); return }
        for predicate in [#Predicate<ComputedNote> { $0.open }, #Predicate<ComputedNote> { $0.heading == "h" }] {
            let made: FieldFilter? = FieldFilter.compile(predicate)
            let compiled = try #require(made)
            let keys = FieldProbe.keys(ComputedNote.self, keyPaths: compiled.keyPaths, sample: computedSample, coder: coder)
            #expect(keys == nil)
        }
    }

    /// The byte search stands for `Collection.contains` only where a `Character` is one byte:
    /// random ASCII texts with carriage returns and line feeds, and texts with combining marks,
    /// give the answer of the generic `contains` that Foundation's predicate calls.
    @Test func theByteSearchAgreesWithTheCharacterSearch() {
        let seed = SplitMix64.seed(replaying: "FOLIO_BYTE_SEARCH_SEED")
        var random = SplitMix64(seed: seed)
        let pieces = ["a", "b", "ab", "\r", "\n", "\r\n", "e", "\u{301}", "é", " "]
        func text(_ count: Int) -> String { (0..<count).map { _ in pieces[random.index(pieces.count)] }.joined() }
        var checked = 0, plain = 0
        for _ in 0..<5000 {
            let whole = text(random.index(8)), part = text(random.index(4))
            let expected = TextSearch.characters(whole, contain: part)
            let starts = TextSearch.characters(whole, startWith: part)
            if TextSearch.plainBytes(whole, part) {
                plain += 1
                #expect(TextSearch.contains(whole, part) == expected, "\(whole.debugDescription) contains \(part.debugDescription), seed \(seed)")
                #expect(whole.utf8.starts(with: part.utf8) == starts, "\(whole.debugDescription) starts with \(part.debugDescription), seed \(seed)")
            }
            checked += 1
        }
        #expect(plain > 500 && plain < checked, "seed \(seed)")
    }

    /// The scanner against the full parser, on files Folio's writer makes from random entities:
    /// the same ids, each range parses to the entity, each field's value is the parsed one.
    @Test func theScannerReadsWhatTheParserReads() throws {
        let seed = SplitMix64.seed(replaying: "FOLIO_FIELD_SCANNER_SEED")
        var random = SplitMix64(seed: seed)
        let coder = EntityCoder()
        let keys = ["title", "name", "done", "priority", "score", "remark", "created", "missing"]
        for round in 0..<200 {
            var entities: [String: JSONValue] = [:]
            for number in 0..<random.index(6) {
                let note = Self.randomNote(&random, day: "2031-01-10", number: number)
                entities[note.id] = try coder.encode(note)
            }
            let bytes = PartitionFile.encode(PartitionFile.Contents(entities: entities, extra: ["note": .array([.string("}{\"")])]))
            let entries = try #require(FieldScanner.entries(bytes, keys: keys), "round \(round), seed \(seed)")
            #expect(Set(entries.map(\.id)) == Set(entities.keys))
            for entry in entries {
                let parsed = try JSONParser.parse(Array(bytes[entry.range]))
                #expect(parsed == entities[entry.id], "round \(round), seed \(seed)")
                for (slot, key) in keys.enumerated() {
                    let expected: FieldValue? =
                        switch parsed[key] {
                        case .string(let text)?: .string(text)
                        case .bool(let flag)?: .bool(flag)
                        case .number(let text)?: .number(text)
                        case nil: nil
                        default: .other
                        }
                    #expect(entry.row.values[slot] == expected, "\(key), round \(round), seed \(seed)")
                }
            }
        }
        #expect(FieldScanner.entries(Array("{\"entities\": {\"a\": {\"title\": \"x\"}".utf8), keys: ["title"]) == nil)
        #expect(FieldScanner.entries(Array("[1]".utf8), keys: ["title"]) == nil)
    }

    /// Rewrites one note's title with python's json module, as a person's script would.
    static func edit(_ file: URL, id: String, title: String) throws {
        let script = """
            import json, sys
            path, key, title = sys.argv[1], sys.argv[2], sys.argv[3]
            data = json.load(open(path, encoding="utf-8"))
            data["entities"][key]["title"] = title
            json.dump(data, open(path, "w", encoding="utf-8"), indent=1, ensure_ascii=True)
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script, file.path, id, title]
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw CocoaError(.fileWriteUnknown) }
    }
}

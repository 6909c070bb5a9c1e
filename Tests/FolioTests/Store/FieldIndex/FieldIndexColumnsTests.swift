@testable import Folio
import FolioCrashSupport
import Foundation
import Testing

/// A query builds the matches of a file whose field index columns hold its entities whole (every
/// entity has every field of the file, each a string, a number or a boolean: FORMAT.md) from the
/// columns, without opening the file. The entities it builds must be exactly those written, down
/// to the last bit of a number and every escape of a string; files with an absent optional are
/// read from their files.
///
/// The model is the entities as written, filtered in Swift. Replays with `FOLIO_COLUMNS_SEED`.
@Suite struct FieldIndexColumnsTests {
    struct Reading: Entity, Equatable {
        static let collection = "readings"
        static let partitioning = Partitioning<Reading>.day(\.day)

        var id: String
        var day: String
        var label: String
        var count: Int
        var value: Double
        var flag: Bool
        /// Left out of the file when nil: a file with one such reading is not whole.
        var note: String?
    }

    static let words = ["milk", "silk", "tea", "rice"]
    /// Pieces of labels and notes: escapes, non-ASCII, a control character, a word.
    static let pieces = ["milk", "\"quoted\"", "back\\slash", "new\nline", "tab\t", "é", "日本", "🥛", "\u{01}", "a/b", " ", ""]
    static let doubles: [Double] = [0.1, -0.0, 1e-300, 1.7976931348623157e308, 123.456, -2.5e-8, 3, .leastNonzeroMagnitude]

    static func label(_ random: inout SplitMix64) -> String {
        (0..<(1 + random.index(4))).map { _ in pieces[random.index(pieces.count)] }.joined(separator: " ")
    }

    /// The predicates asked, with the model's own test of each.
    static func queries() -> [(name: String, query: Query<Reading>, test: (Reading) -> Bool)] {
        [
            (
                "label contains milk, not flagged", Query(.all, where: #Predicate { $0.label.contains("milk") && !$0.flag }),
                { $0.label.contains("milk") && !$0.flag }
            ),
            ("count above zero", Query(.all, where: #Predicate { $0.count > 0 }), { $0.count > 0 }),
            ("value below 1 or flagged", Query(.all, where: #Predicate { $0.value < 1 || $0.flag }), { $0.value < 1 || $0.flag }),
        ]
    }

    @Test func matchesBuiltFromTheColumnsAreTheEntitiesWritten() async throws {
        let seed = ProcessInfo.processInfo.environment["FOLIO_COLUMNS_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 1...UInt64(UInt32.max))
        var random = SplitMix64(seed: seed)
        let folder = TemporaryFolder()
        let days = (1...16).map { String(format: "2025-04-%02d", $0) }
        // Four days where every other reading has no note (absent from its object).
        let partial = Set(days.shuffled(using: &random).prefix(4))
        var written: [String: Reading] = [:]
        for day in days {
            for number in 0..<(1 + random.index(12)) {
                let reading = Reading(
                    id: "\(day)-\(number)-\(random.index(1000))", day: day, label: Self.label(&random),
                    count: [Int.min, Int.max, 0, -1, 42, random.index(1_000_000) - 500_000][random.index(6)],
                    value: random.index(3) == 0 ? Self.doubles[random.index(Self.doubles.count)] : Double(random.index(2_000_000)) / 997 - 1000,
                    flag: random.index(2) == 0,
                    note: partial.contains(day) && number % 2 == 0 ? nil : Self.label(&random))
                written[reading.id] = reading
            }
        }
        // FORMAT.md: a file is whole when every reading of it has every field of the file, so
        // when all or none of its readings have a note.
        let wholeDays = Set(days.filter { day in Set(written.values.filter { $0.day == day }.map { $0.note == nil }).count == 1 })
        let store = try await Store.open(at: folder.url, configuration: .testing())
        try await store.write { [written] tx in for reading in written.values { try tx.upsert(reading) } }
        try await store.checkpoint()
        try await store.close()
        // Entries are made only of files that settled (two seconds unchanged).
        try await Task.sleep(for: .milliseconds(2200))

        // The first store reads the files and makes the index; the second answers from it.
        var fromColumns = 0, answers = 0
        for pass in ["from the files", "from the index"] {
            let reader = try await Store.open(at: folder.url, configuration: .testing())
            for (name, query, test) in Self.queries() {
                let before = await reader.cacheFootprint()
                let found = try await reader.fetch(query)
                await reader.saveFieldIndexesNow()
                let after = await reader.cacheFootprint()
                let expected = written.values.filter(test)
                #expect(found.count == expected.count, "\(name), \(pass): \(found.count) found, \(expected.count) written (seed \(seed))")
                let byID = Dictionary(found.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
                for reading in expected where byID[reading.id] != reading {
                    Issue.record("\(name), \(pass): \(reading.id) read as \(String(describing: byID[reading.id])), written as \(reading) (seed \(seed))")
                }
                let built = after.partitionsFromColumns - before.partitionsFromColumns
                #expect(built <= wholeDays.count, "\(name), \(pass): a file with an absent note was built from columns (seed \(seed))")
                fromColumns += built
                answers += 1
            }
            try await reader.close()
        }
        let index = FieldIndexFile.read(FileSystem(root: folder.url.path), collection: Reading.collection, fields: nil).entries
        #expect(index.count == days.count, "every settled file has an entry")
        for (key, entry) in index {
            #expect(entry.whole == wholeDays.contains(key.text), "\(key.text): whole is \(entry.whole) (seed \(seed))")
        }
        // Each query of the second pass builds the whole files but the filter's sample from columns.
        #expect(fromColumns >= Self.queries().count * (wholeDays.count - 1), "only \(fromColumns) files built from columns (seed \(seed))")
        print("field index columns: \(answers) answers as written, \(fromColumns) files built from columns, \(written.count) readings (seed \(seed))")
    }
}

@testable import Folio
import FolioCrashSupport
import Foundation
import Testing

/// A todo whose decoding writes one word in capitals: its `title` is read from the `title` field
/// (the probe maps it), but not always as the field reads.
struct ShoutedTodo: Entity, Equatable {
    static let collection = "shoutedTodos"
    static let partitioning = Partitioning<ShoutedTodo>.day(\.date)

    var id: String
    var title: String
    var date: String
    var done: Bool

    enum CodingKeys: String, CodingKey { case id, title, date, done }

    init(id: String, title: String, date: String, done: Bool) {
        (self.id, self.title, self.date, self.done) = (id, title, date, done)
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        title = try container.decode(String.self, forKey: .title).replacingOccurrences(of: "milk", with: "MILK")
        date = try container.decode(String.self, forKey: .date)
        done = try container.decode(Bool.self, forKey: .done)
    }
}

/// A todo whose decoding changes the case of its title: `lowercased` or not.
struct CasedTodo: Entity, Equatable {
    static let collection = "casedTodos"
    static let partitioning = Partitioning<CasedTodo>.day(\.date)
    nonisolated(unsafe) static var lowercases = true

    var id: String
    var title: String
    var date: String

    enum CodingKeys: String, CodingKey { case id, title, date }

    init(id: String, title: String, date: String) {
        (self.id, self.title, self.date) = (id, title, date)
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        let title = try container.decode(String.self, forKey: .title)
        self.title = Self.lowercases ? title.lowercased() : title.uppercased()
        date = try container.decode(String.self, forKey: .date)
    }
}

/// A search for a word (`title.contains("milk") && …`) rules out rows of the field index on the
/// column's bytes (FieldScanner.rows(_:mayContain:count:), Scan/WordRows.swift), and a candidate
/// whose decoded properties are the values the filter read is taken without testing the predicate
/// again (FieldFilter.agreement). Neither may ever drop or add an entity the predicate decides
/// otherwise.
@Suite struct WordRowsTests {
    /// Pieces of titles: plain words, other text (decomposed and precomposed accents, the Kelvin
    /// sign that equals "K", a combining mark after "k"), and what JSON escapes.
    static let pieces = [
        "milk", "silk", "Kilo", "ilk", "\u{212A}ilo", "mil\u{212A}", "milk\u{301}", "café", "cafe\u{301}", "\"", "\\",
        "\r\n", "\n", "\t", ";", "a,b", " ", "m", "🥛", "\u{1}",
    ]
    /// Words a predicate searches for: plain text only (others are never searched on bytes).
    static let words = ["milk", "ilk", "K", "Kilo", ";", "\"", "a\",\"b", ",", "m", " ", "k,"]

    /// A JSON string for `text`: escaped as Folio writes it, or with some ASCII letters written as
    /// `\u` escapes, as a person or another tool may write them.
    static func quoted(_ text: String, _ random: inout SplitMix64) -> String {
        var result = "\""
        let spelled = random.index(8) == 0
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20: result += String(format: "\\u%04x", scalar.value)
            case _ where spelled && scalar.isASCII && random.index(3) == 0: result += String(format: "\\u%04x", scalar.value)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }

    /// Random columns against a model read with Foundation's JSON parser: a row whose string
    /// holds the word, `Character` by `Character` as the predicate compares, is never ruled out;
    /// a string written without escapes in plain ASCII and without the word's bytes always is.
    /// Replays with `FOLIO_WORD_ROWS_SEED`.
    @Test func aRowIsRuledOutOnlyWhenItsStringCannotHoldTheWord() throws {
        let seed = SplitMix64.seed(replaying: "FOLIO_WORD_ROWS_SEED")
        var random = SplitMix64(seed: seed)
        var (lines, rows, matching, ruledOut, quickLines) = (0, 0, 0, 0, 0)
        // Each line in one style: plain words (the usual titles), other text without escapes
        // (both take the quick path, which counts quotes), or anything, with values of other kinds.
        let unescaped = Self.pieces.filter { !$0.unicodeScalars.contains { $0.value < 0x20 || $0 == "\"" || $0 == "\\" } }
        for _ in 0..<600 {
            let count = random.index(12)
            let style = random.index(3)
            let choices = [Array(Self.pieces.prefix(5)), unescaped, Self.pieces][style]
            var values: [String] = []
            for _ in 0..<count {
                switch style == 2 ? random.index(10) : 9 {
                case 0: values.append("null")
                case 1: values.append(random.index(2) == 0 ? "true" : "-12.5e3")
                default:
                    let text = (0..<random.index(5)).map { _ in choices[random.index(choices.count)] }.joined(separator: random.index(2) == 0 ? " " : "")
                    values.append(Self.quoted(text, &random))
                }
            }
            let line = "[" + values.joined(separator: ",") + "]"
            let word = Self.words[random.index(Self.words.count)]
            let parsed = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8), options: [.fragmentsAllowed]) as? [Any], "\(line)")
            let search = try #require(SearchWord(Array(word.utf8)))
            let found = try #require(
                FieldScanner.rows(ArraySlice(line.utf8), mayContain: search, count: count),
                "seed \(seed): no rows for \(line)")
            #expect(FieldScanner.rows(ArraySlice(line.utf8), mayContain: search, count: count + 1) == nil, "seed \(seed): the count is not checked")
            lines += 1
            if !line.contains("\\"), !values.contains(where: { !$0.hasPrefix("\"") }) { quickLines += 1 }
            for (index, value) in parsed.enumerated() {
                rows += 1
                guard let text = value as? String else {
                    #expect(found[index], "seed \(seed): the value \(values[index]) of \(line) was ruled out for \(word)")
                    continue
                }
                let characters = Array(text), wanted = Array(word)
                let holds =
                    characters.count >= wanted.count
                    && (0...(characters.count - wanted.count)).contains { Array(characters[$0..<($0 + wanted.count)]) == wanted }
                if holds {
                    matching += 1
                    #expect(found[index], "seed \(seed): \(values[index]) holds \(word) but was ruled out (\(line))")
                }
                let raw = values[index].utf8.dropFirst().dropLast()
                if !raw.contains(UInt8(ascii: "\\")), raw.allSatisfy({ $0 < 0x80 && $0 != 0x0D }), !raw.elementsEqual(word.utf8),
                    !String(decoding: raw, as: UTF8.self).contains(word)
                {
                    ruledOut += 1
                    #expect(!found[index], "seed \(seed): \(values[index]) cannot hold \(word) but was kept")
                }
            }
        }
        print("word rows: seed \(seed), \(lines) lines (\(quickLines) all plain strings), \(rows) rows, \(matching) holding the word, \(ruledOut) ruled out")
        #expect(matching > 20 && ruledOut > 100 && quickLines > 150, "seed \(seed): the columns did not reach every case")
    }

    /// Only what the whole predicate requires is a requirement: a word on a side of `&&`, never in
    /// a part of `||` or under `!`. A flag rules out no row (flag rows were measured not to pay).
    @Test func requirementsAreWhatThePredicateCannotHoldWithout() throws {
        func requirements(_ predicate: Predicate<Todo>) throws -> [FieldRequirement] {
            try #require(FieldFilter.compile(predicate)).requirements
        }
        let milk = try #require(SearchWord(Array("milk".utf8)))
        #expect(try requirements(#Predicate { $0.title.contains("milk") && !$0.done }) == [.word(slot: 0, milk)])
        #expect(try requirements(#Predicate { $0.done && ($0.title.contains("milk") && $0.done == false) }) == [.word(slot: 1, milk)])
        #expect(try requirements(#Predicate { true == $0.done }).isEmpty)
        #expect(try requirements(#Predicate { $0.title.contains("milk") || !$0.done }).isEmpty)
        #expect(try requirements(#Predicate { !($0.title.contains("milk") && $0.done) }).isEmpty)
        #expect(try requirements(#Predicate { !(!$0.done) }).isEmpty)
        #expect(try requirements(#Predicate { $0.done != false }).isEmpty)
        #expect(try requirements(#Predicate { $0.title.contains("") && $0.title.contains("café") }).isEmpty)
    }

    /// Titles with escapes, other text and the word split by a combining mark, queried once to
    /// make the field index and once from it: both answers are the predicate's on the todos.
    @Test func aSearchFromTheIndexAnswersAsThePredicate() async throws {
        let folder = TemporaryFolder()
        let days = (1...10).map { String(format: "2025-04-%02d", $0) }
        var todos: [Todo] = []
        var random = SplitMix64(seed: 20_251_123)
        for day in days {
            for _ in 0..<6 {
                let title = (0..<(1 + random.index(4))).map { _ in Self.pieces[random.index(Self.pieces.count)] }.joined(separator: " ")
                todos.append(todo(title, on: day, done: random.index(3) == 0))
            }
        }
        let written = todos
        var store = try await Store.open(at: folder.url, configuration: .testing())
        try await store.write { tx in for todo in written { try tx.upsert(todo) } }
        try await store.checkpoint()
        try await store.close()
        try await Task.sleep(for: .milliseconds(2200))   // entries only of files two seconds old
        // The word required, and the word under `!` and `||`, where it rules nothing out.
        let predicates: [(String, Predicate<Todo>)] =
            ["milk", "K", "\"", ";"].flatMap { word in
                [
                    (word, #Predicate<Todo> { $0.title.contains(word) && !$0.done }),
                    ("not \(word)", #Predicate<Todo> { !$0.title.contains(word) && !$0.done }),
                    ("\(word) or done", #Predicate<Todo> { $0.title.contains(word) || $0.done }),
                    ("done and \(word)", #Predicate<Todo> { $0.done == true && $0.title.contains(word) }),
                ]
            } + [
                ("not done", #Predicate<Todo> { !$0.done }), ("done", #Predicate<Todo> { $0.done }),
                ("done is false", #Predicate<Todo> { false == $0.done }), ("not not done", #Predicate<Todo> { !(!$0.done) }),
            ]
        for (word, predicate) in predicates {
            let expected = Set(try written.filter { try predicate.evaluate($0) }.map(\.id))
            for pass in ["making the index", "from the index"] {
                store = try await Store.open(at: folder.url, configuration: .testing())
                let before = await store.cacheFootprint().partitionsFromFieldIndex
                let found = try await store.fetch(Query<Todo>(.all, where: predicate))
                let fromIndex = await store.cacheFootprint().partitionsFromFieldIndex - before
                try await store.close()
                #expect(Set(found.map(\.id)) == expected && found.count == expected.count, "\(word), \(pass)")
                // Every file but the filter's sample, which is loaded to map the fields.
                if pass == "from the index" { #expect(fromIndex == days.count - 1, "\(word): \(fromIndex) files from the index") }
            }
        }
    }

    /// A title decoded in other case than the file holds it is not read from the field: the
    /// probe's values hold capitals and small letters, so either change shows.
    @Test func aTitleDecodedInOtherCaseIsNotReadFromItsField() throws {
        let coder = EntityCoder()
        guard case .object(let sample) = try coder.encode(CasedTodo(id: "a", title: "Milk", date: "2031-01-10")) else {
            Issue.record("not an object")
            return
        }
        let compiled: FieldFilter? = FieldFilter.compile(#Predicate<CasedTodo> { $0.title.contains("milk") })
        let filter = try #require(compiled)
        for lowercases in [true, false] {
            CasedTodo.lowercases = lowercases
            #expect(FieldProbe.keys(CasedTodo.self, keyPaths: filter.keyPaths, sample: sample, coder: coder) == nil, "lowercased: \(lowercases)")
        }
    }

    /// A todo the filter keeps on its file's bytes but whose decoded title differs from them is
    /// tested against the predicate: "milk" in the file is "MILK" in the todo, so no todo holds
    /// "milk", whatever the file says.
    @Test func aPropertyDecodedOtherwiseThanItsFieldIsTestedAgain() async throws {
        let folder = TemporaryFolder()
        let days = (1...9).map { String(format: "2025-05-%02d", $0) }
        let notes = days.flatMap { day in
            [
                ShoutedTodo(id: "a-\(day)", title: "milk and tea", date: day, done: false),
                ShoutedTodo(id: "b-\(day)", title: "bread", date: day, done: false),
            ]
        }
        var store = try await Store.open(at: folder.url, configuration: .testing())
        try await store.write { tx in for note in notes { try tx.upsert(note) } }
        try await store.checkpoint()
        try await store.close()
        try await Task.sleep(for: .milliseconds(2200))
        // Only the word the filter holds true on the bytes: a decoder that changes just some
        // values (here "MILK") is beyond what the probe can see, for any filter on fields.
        for word in ["milk", "tea"] {
            let predicate = #Predicate<ShoutedTodo> { $0.title.contains(word) && !$0.done }
            for pass in ["making the index", "from the index"] {
                store = try await Store.open(at: folder.url, configuration: .testing())
                let decoded = try await store.fetch(Query<ShoutedTodo>(.all))
                let expected = Set(try decoded.filter { try predicate.evaluate($0) }.map(\.id))
                try await store.close()
                store = try await Store.open(at: folder.url, configuration: .testing())
                let found = try await store.fetch(Query<ShoutedTodo>(.all, where: predicate))
                try await store.close()
                #expect(Set(found.map(\.id)) == expected, "\(word), \(pass): \(found.map(\.title))")
            }
        }
    }
}

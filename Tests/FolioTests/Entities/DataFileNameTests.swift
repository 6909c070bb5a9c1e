@testable import Folio
import FolioCrashSupport
import Foundation
import Testing

/// The one mapping between file names and partitions or commands (DataFileName, CommandFileName),
/// checked against a model written from FORMAT.md ("Folder layout", "The outbox"): a day file is
/// `<collection>/YYYY-MM/YYYY-MM-DD.json` for a real date of the proleptic Gregorian calendar
/// (years 0001–9999) in the folder of its own month, a month file `<collection>/YYYY-MM.json`, a
/// collection file `<collection>.json`, a command file 20 ASCII digits from 1. Before one place
/// held this, the copy check took `2026-13.json` for a month and a day in another month's folder
/// for a day.
@Suite struct DataFileNameTests {
    /// The model's calendar: the Gregorian rules, by arithmetic.
    static func daysIn(year: Int, month: Int) -> Int {
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        return [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
    }

    static func pad(_ value: Int, _ width: Int) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, width - text.count)) + text
    }

    static let years = [1, 4, 99, 100, 400, 1582, 1583, 1600, 1700, 1900, 1999, 2000, 2023, 2024, 2025, 2026, 2100, 2400, 9996, 9999]

    @Test func everyDayAndMonthOfTheCalendarAndNothingElse() throws {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = try #require(TimeZone(identifier: "UTC"))
        var days = 0, months = 0
        for year in Self.years {
            for month in 0...13 {
                let monthText = Self.pad(year, 4) + "-" + Self.pad(month, 2)
                let monthPath = "todos/\(monthText).json"
                let validMonth = (1...12).contains(month)
                let monthAddress = DataFileName.address(of: monthPath)
                #expect((monthAddress != nil) == validMonth, "\(monthPath)")
                #expect(DataFileName.month(fileName: monthText + ".json")?.text == (validMonth ? monthText : nil))
                #expect(DataFileName.isMonthFolder(monthText) == validMonth)
                if let monthAddress { #expect(DataFileName.path(of: monthAddress) == monthPath); months += 1 }
                for day in 0...32 {
                    let dayText = monthText + "-" + Self.pad(day, 2)
                    let path = "todos/\(monthText)/\(dayText).json"
                    let valid = validMonth && day >= 1 && day <= Self.daysIn(year: year, month: month)
                    // Foundation agrees where its calendar is Gregorian (from 1583; before, it is Julian).
                    if year >= 1583, validMonth, day >= 1 {
                        let date = calendar.date(from: DateComponents(year: year, month: month, day: day))
                        let back = date.map { calendar.dateComponents([.year, .month, .day], from: $0) }
                        #expect((back?.day == day && back?.month == month) == valid, "the model and Foundation disagree on \(dayText)")
                    }
                    let address = DataFileName.address(of: path)
                    #expect((address != nil) == valid, "\(path)")
                    #expect(DataFileName.day(fileName: dayText + ".json")?.text == (valid ? dayText : nil))
                    if let address {
                        #expect(address.granularity == .day && address.key.text == dayText && address.collection == "todos")
                        #expect(DataFileName.path(of: address) == path)
                        days += 1
                    }
                    // In another month's folder it is no partition file.
                    let otherMonth = Self.pad(year, 4) + "-" + Self.pad(month == 1 ? 2 : 1, 2)
                    #expect(DataFileName.address(of: "todos/\(otherMonth)/\(dayText).json") == nil)
                    #expect(DataFileName.day(fileName: dayText + ".json", inMonthFolder: otherMonth) == nil)
                }
            }
        }
        let leapYears = Self.years.filter { $0 % 4 == 0 && ($0 % 100 != 0 || $0 % 400 == 0) }.count
        #expect(days == Self.years.count * 365 + leapYears)
        #expect(months == Self.years.count * 12)
        print(
            "data file names: \(days) days and \(months) months of \(Self.years.count) years read, every other of \(Self.years.count * 14 * 33) names refused")
    }

    /// Mutations of valid paths from a seed: whatever the mapping accepts maps back to the same
    /// path (one spelling per partition), and the model decides what it accepts.
    @Test func mutatedNamesMapBackOrAreRefused() throws {
        let seed = SplitMix64.seed(replaying: "FOLIO_NAMES_SEED")
        var random = SplitMix64(seed: seed)
        let alphabet = Array("0123456789-/._aZ \u{0663}\u{FF11}J+")
        var accepted = 0
        for _ in 0..<20_000 {
            let year = 1 + random.index(9999), month = 1 + random.index(12), day = 1 + random.index(Self.daysIn(year: year, month: month))
            let m = Self.pad(year, 4) + "-" + Self.pad(month, 2)
            var path = Array(["todos/\(m)/\(m)-\(Self.pad(day, 2)).json", "stats/\(m).json", "tags.json"][random.index(3)])
            for _ in 0...random.index(3) {
                let at = random.index(path.count)
                switch random.index(3) {
                case 0: path[at] = alphabet[random.index(alphabet.count)]
                case 1: path.insert(alphabet[random.index(alphabet.count)], at: at)
                default: path.remove(at: at)
                }
            }
            let text = String(path)
            let expected = Self.model(text)
            let address = DataFileName.address(of: text)
            #expect((address != nil) == expected, "\(text) (seed \(seed))")
            if let address {
                #expect(DataFileName.path(of: address) == text, "\(text) (seed \(seed))")
                accepted += 1
            }
        }
        print("data file names: 20000 mutated paths, \(accepted) accepted and mapped back, the rest refused (seed \(seed))")
    }

    /// The model of a data file path, from FORMAT.md.
    static func model(_ path: String) -> Bool {
        guard path.hasSuffix(".json") else { return false }
        let parts = path.dropLast(5).split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        let collection = Array(parts[0].unicodeScalars)
        func isLetter(_ s: Unicode.Scalar) -> Bool { ("a"..."z").contains(s) || ("A"..."Z").contains(s) }
        func isDigit(_ s: Unicode.Scalar) -> Bool { ("0"..."9").contains(s) }
        guard let first = collection.first, isLetter(first), collection.count <= 64,
            collection.allSatisfy({ isLetter($0) || isDigit($0) || $0 == "_" || $0 == "-" }),
            !["folio", "outbox"].contains(parts[0].lowercased())
        else { return false }
        func number(_ text: Substring) -> Int? { text.unicodeScalars.allSatisfy(isDigit) && !text.isEmpty ? Int(text) : nil }
        func month(_ text: String) -> (Int, Int)? {
            let pieces = text.split(separator: "-", omittingEmptySubsequences: false)
            guard pieces.count == 2, pieces[0].count == 4, pieces[1].count == 2,
                let y = number(pieces[0]), let m = number(pieces[1]), y >= 1, (1...12).contains(m)
            else { return nil }
            return (y, m)
        }
        switch parts.count {
        case 1: return true
        case 2: return month(parts[1]) != nil
        case 3:
            let day = parts[2]
            guard day.count == 10, day.hasPrefix(parts[1] + "-"), let (y, m) = month(parts[1]),
                let d = number(day.suffix(2)[...]), day.dropLast(2).hasSuffix("-")
            else { return false }
            return d >= 1 && d <= daysIn(year: y, month: m)
        default: return false
        }
    }

    @Test func commandFileNamesAreTwentyDigitsFromOne() {
        var random = SplitMix64(seed: 42)
        for _ in 0..<2_000 {
            let sequence = 1 + random.next() % UInt64.max
            let name = CommandFileName.name(sequence)
            #expect(name.utf8.count == 25)
            #expect(CommandFileName.sequence(fromFileName: name) == sequence)
            #expect(CommandFileName.sequence(fromReasonFileName: CommandFileName.reasonName(sequence)) == sequence)
            #expect(CommandFileName.sequence(ofPath: "outbox/failed/" + CommandFileName.reasonName(sequence)) == sequence)
            #expect(CommandFileName.sequence(fromFileName: CommandFileName.reasonName(sequence)) == nil)
        }
        for refused in [
            "00000000000000000000.json", "0000000000000000042.json", "000000000000000000042.json",
            "0000000000000000004\u{0663}.json", "00000000000000000042.JSON", "+0000000000000000042.json",
            "18446744073709551616.json",
        ] {
            #expect(CommandFileName.sequence(fromFileName: refused) == nil, "\(refused)")
        }
        #expect(CommandFileName.sequence(ofPath: "todos/00000000000000000042.json") == nil)
    }

    /// The readers agree: the store, the copy check and `folio verify` on a folder holding valid
    /// partition files and names that only look like them.
    @Test func theStoreTheCopyCheckAndVerifyReadTheSameFiles() async throws {
        let folder = TemporaryFolder()
        let store = try await Store.open(at: folder.url, configuration: .testing())
        try await store.write { tx in
            try tx.upsert(Slot(id: "a", day: "2026-02-28", transaction: 0, group: [], writer: "W"))
            try tx.upsert(Slot(id: "b", day: "2024-02-29", transaction: 0, group: [], writer: "W"))
        }
        try await store.close()
        let look = try folder.text("slots/2026-02/2026-02-28.json")
        for impostor in [
            "slots/2026-13/2026-13-01.json", "slots/2026-02/2026-02-30.json", "slots/2026-02/2026-03-01.json",
            "slots/2025-02/2025-02-29.json", "slots/2026-00/2026-00-10.json",
        ] {
            try folder.write(look.replacingOccurrences(of: "\"a\"", with: "\"x\""), to: impostor)
        }
        let copyCheck = try CopyCheck.dataAndCommandFiles(FileSystem(root: folder.url.path)).filter { $0.hasPrefix("slots/") }.sorted()
        #expect(copyCheck == ["slots/2024-02/2024-02-29.json", "slots/2026-02/2026-02-28.json"])
        let reopened = try await Store.open(at: folder.url, configuration: .testing())
        let ids = try await reopened.fetch(Query<Slot>(.all)).map(\.id).sorted()
        try await reopened.close()
        #expect(ids == ["a", "b"])
        let report = try await Store.verify(at: folder.url)
        let flagged = Set(report.problems.map(\.path).filter { $0.hasPrefix("slots/") && !$0.hasSuffix("2026-02-28.json") && !$0.hasSuffix("2024-02-29.json") })
        // Each impostor by name: the folders that are no month, and the files in month folders.
        #expect(
            flagged == [
                "slots/2026-13", "slots/2026-00", "slots/2026-02/2026-02-30.json", "slots/2026-02/2026-03-01.json",
                "slots/2025-02/2025-02-29.json",
            ], "verify names \(flagged.sorted())")
    }
}

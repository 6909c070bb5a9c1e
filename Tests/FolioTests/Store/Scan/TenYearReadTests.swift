@testable import Folio
import Foundation
import Testing

/// Reads of a store of ten years (3,650 day files, 98,550 todos), timed and printed, never
/// asserted: a measure to compare before and after a change, not a test of speed. Opt-in, as it
/// builds the store once (in `FOLIO_TEN_YEAR_STORE`, default `/dev/shm/folio-ten-years`, reused by
/// later runs): `FOLIO_TEN_YEARS=1 swift test --filter TenYearReadTests`.
/// What it does assert: the answers (counts from how the store was built) and that a cold `get`
/// reads only its own partition file.
@Suite(.enabled(if: ProcessInfo.processInfo.environment["FOLIO_TEN_YEARS"] != nil))
struct TenYearReadTests {
    static let days = 3_650
    static let perDay = 27

    static func day(_ index: Int) -> String {
        let date = Date(timeIntervalSince1970: 1_577_836_800 + Double(index) * 86_400)   // from 2020-01-01
        let components = Calendar(identifier: .gregorian).dateComponents(in: TimeZone(identifier: "UTC")!, from: date)
        return String(format: "%04d-%02d-%02d", components.year!, components.month!, components.day!)
    }

    static func todo(day: Int, number: Int) -> Todo {
        var todo = Todo(
            id: UUID(uuidString: String(format: "00000000-0000-4000-8000-%06d%06d", day, number))!,
            title: "todo \(number) of day \(day)\(number % 10 == 3 ? " with milk" : "")", date: Self.day(day))
        todo.done = number % 2 == 0
        return todo
    }

    static var folder: URL {
        URL(fileURLWithPath: ProcessInfo.processInfo.environment["FOLIO_TEN_YEAR_STORE"] ?? "/dev/shm/folio-ten-years")
    }

    /// Builds the store through Folio (so it has its kept versions, as a real one does) once.
    static func prepare() async throws {
        let marker = folder.appendingPathComponent(".complete")
        if FileManager.default.fileExists(atPath: marker.path) { return }
        try? FileManager.default.removeItem(at: folder)
        var configuration = Store.Configuration()
        configuration.durability = .relaxed
        configuration.checkpointDelay = .seconds(3600)
        let store = try await Store.open(at: folder, configuration: configuration)
        for month in stride(from: 0, to: days, by: 30) {
            try await store.write { tx in
                for day in month..<min(month + 30, days) {
                    for number in 0..<perDay { try tx.upsert(todo(day: day, number: number)) }
                }
            }
        }
        try await store.close()
        try Data().write(to: marker)
    }

    static func residentMiB() -> Double {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8),
            let pages = text.split(separator: " ").dropFirst().first.flatMap({ Double($0) })
        else { return 0 }
        return pages * 4096 / 1_048_576
    }

    static func time<T>(_ body: () async throws -> T) async rethrows -> (T, Duration) {
        let start = ContinuousClock.now
        let result = try await body()
        return (result, ContinuousClock.now - start)
    }

    @Test func readsOfTenYears() async throws {
        try await Self.prepare()
        let reads = PathCounter()
        var configuration = Store.Configuration()
        configuration.ioHook = { step in if case .read(let path) = step { reads.add(path) } }
        var lines: [String] = []

        // Cold: open and get one id.
        let (store, openTime) = try await Self.time { try await Store.open(at: Self.folder, configuration: configuration) }
        reads.reset()
        let wanted = Self.todo(day: 1_234, number: 5)
        let (found, getTime) = try await Self.time { try await store.get(Todo.self, id: wanted.id) }
        #expect(found == wanted)
        let dataReads = reads.all.filter { $0.hasPrefix("todos/") }
        #expect(dataReads == ["todos/\(wanted.date.prefix(7))/\(wanted.date).json"], "a cold get reads only its partition: \(dataReads.prefix(5))")
        lines.append("cold open \(openTime), get \(getTime) (\(dataReads.count) data file(s) read, \(reads.count) files in all)")

        // A predicate over all ten years.
        let rssBefore = Self.residentMiB()
        let query = Query<Todo>(.all, where: #Predicate { $0.title.contains("milk") && !$0.done })
        let (matching, scanTime) = try await Self.time { try await store.fetch(query) }
        #expect(matching.count == Self.days * 3)   // numbers 3, 13, 23 of each day, all odd: not done
        lines.append("predicate over all: \(scanTime), \(matching.count) matches")
        let (again, secondScan) = try await Self.time { try await store.fetch(query) }
        #expect(again.count == matching.count)
        lines.append("the same again: \(secondScan)")

        // Every day, one query each.
        let (total, daysTime) = try await Self.time {
            var total = 0
            for day in 0..<Self.days { total += try await store.fetch(Query<Todo>(.day(Self.day(day)))).count }
            return total
        }
        #expect(total == Self.days * Self.perDay)
        lines.append("every day, one query each: \(daysTime)")
        lines.append("resident memory: \(String(format: "%.0f", rssBefore)) MiB before the scans, \(String(format: "%.0f", Self.residentMiB())) MiB after")
        try await store.close()
        print("ten years: " + lines.joined(separator: "; "))
    }
}

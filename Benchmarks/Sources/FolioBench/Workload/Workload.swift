import Foundation

/// The workload every contender runs, generated from a fixed seed: todos spread evenly over the
/// days ending 2026-12-31, and edits and reads concentrated on recent days, as in a real app
/// (a person mostly touches this week's todos).
struct Workload: Sendable {
    /// The days, oldest first, as `YYYY-MM-DD`.
    let days: [String]
    /// The todos, in creation order.
    let todos: [Todo]
    /// The indexes in `todos` of each day's todos.
    let todosByDay: [String: [Int]]
    let seed: UInt64

    /// The mean distance, in days back from the last day, of an edit or a read.
    static let recentMeanDays = 7.0

    /// - Parameters:
    ///   - seed: The seed of everything generated.
    ///   - todoCount: How many todos.
    ///   - dayCount: Over how many days (365 for a year, 3,650 for ten).
    init(seed: UInt64, todoCount: Int, dayCount: Int) {
        self.seed = seed
        var random = SplitMix64(seed: seed)
        days = Self.days(count: dayCount)
        var todos: [Todo] = []
        todos.reserveCapacity(todoCount)
        var byDay: [String: [Int]] = [:]
        for index in 0..<todoCount {
            let dayIndex = random.index(dayCount)
            let todo = Self.newTodo(on: days[dayIndex], age: dayCount - 1 - dayIndex, random: &random)
            byDay[todo.date, default: []].append(index)
            todos.append(todo)
        }
        self.todos = todos
        todosByDay = byDay
    }

    /// `count` upserts for the durable-transaction contenders: 70% edit a todo of a recent day
    /// (toggle done, retitle, bump updatedAt), 30% create one on a recent day. The same list
    /// for every contender of a round; `salt` (the round) varies it between rounds.
    func edits(count: Int, salt: UInt64) -> [Todo] {
        var random = SplitMix64(seed: seed ^ (0xED17 &* (salt &+ 1)))
        var edits: [Todo] = []
        edits.reserveCapacity(count)
        var edited: [String: Todo] = [:]
        for _ in 0..<count {
            let dayIndex = recentDayIndex(&random)
            let day = days[dayIndex]
            let existing = todosByDay[day] ?? []
            if random.unit() < 0.7, !existing.isEmpty {
                let original = todos[existing[random.index(existing.count)]]
                var todo = edited[original.id] ?? original
                todo.done.toggle()
                if random.unit() < 0.3 { todo.title = Self.title(&random) }
                todo.updatedAt = todo.updatedAt.addingTimeInterval(60)
                edited[todo.id] = todo
                edits.append(todo)
            } else {
                edits.append(Self.newTodo(on: day, age: days.count - 1 - dayIndex, random: &random))
            }
        }
        return edits
    }

    /// `count` days to read, concentrated on recent days like the edits.
    func readDays(count: Int, salt: UInt64) -> [String] {
        var random = SplitMix64(seed: seed ^ (0x5EAD &* (salt &+ 1)))
        return (0..<count).map { _ in days[recentDayIndex(&random)] }
    }

    /// A day index, exponentially distributed back from the last day.
    private func recentDayIndex(_ random: inout SplitMix64) -> Int {
        let back = Int(-log(1 - random.unit()) * Self.recentMeanDays)
        return days.count - 1 - min(back, days.count - 1)
    }

    private static func newTodo(on day: String, age: Int, random: inout SplitMix64) -> Todo {
        let created = dayStart(day).addingTimeInterval(Double(random.index(86_400_000)) / 1000)
        // Old todos are mostly done; today's mostly not.
        let done = random.unit() < min(0.9, 0.2 + Double(age) / 30)
        let tag = random.index(10)
        return Todo(
            id: uuid(&random), title: title(&random), date: day, done: done,
            priority: random.index(4), tagID: tag < 8 ? "tag-\(tag)" : nil,
            createdAt: created, updatedAt: created)
    }

    private static let words = [
        "buy", "milk", "call", "mom", "review", "pull", "request", "fix", "the", "bike", "book",
        "flight", "to", "Lisbon", "water", "plants", "send", "invoice", "for", "October", "read",
        "chapter", "three", "plan", "sprint", "meeting", "notes", "clean", "kitchen", "renew",
        "passport", "pay", "rent", "walk", "dog", "prepare", "slides", "dentist", "at", "noon",
    ]

    /// A title of about 40 characters.
    private static func title(_ random: inout SplitMix64) -> String {
        var title = ""
        while title.count < 36 {
            if !title.isEmpty { title += " " }
            title += words[random.index(words.count)]
        }
        return String(title.prefix(44))
    }

    static func uuid(_ random: inout SplitMix64) -> String {
        let high = random.next()
        let low = random.next()
        let hex = String(format: "%016llX%016llX", high, low)
        let characters = Array(hex)
        let parts = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(characters[$0]) }
        return parts.joined(separator: "-")
    }

    /// The `count` days ending 2026-12-31.
    static func days(count: Int) -> [String] {
        let last = CivilDay(parsing: "2026-12-31")?.daysSinceEpoch ?? 0
        return (0..<count).map { CivilDay(daysSinceEpoch: last - (count - 1 - $0)).text }
    }

    static func dayStart(_ day: String) -> Date {
        Date(timeIntervalSince1970: Double(CivilDay(parsing: day)?.daysSinceEpoch ?? 0) * 86_400)
    }
}

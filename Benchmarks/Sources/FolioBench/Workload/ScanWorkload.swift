import Foundation

/// The scan matrix's entities, generated from a fixed seed: spread evenly over the days ending
/// 2026-12-31 (as the ten-year workload), with words, flags and numbers of known frequency so that
/// each of the matrix's predicates (ScanPredicates.swift) selects about the share it is named for.
struct ScanWorkload: Sendable {
    let days: [String]
    let wide: [WideTodo]
    var narrow: [NarrowTodo] { wide.map(NarrowTodo.init) }

    /// Words put in titles, each with its share of titles; no other word of a title or of the
    /// filler contains them, in any case.
    static let plantedWords: [(word: String, share: Double)] = [("piano", 0.001), ("dentist", 0.02), ("invoice", 0.2)]

    init(seed: UInt64, count: Int, dayCount: Int) {
        var random = SplitMix64(seed: seed)
        days = Workload.days(count: dayCount)
        var wide: [WideTodo] = []
        wide.reserveCapacity(count)
        for _ in 0..<count {
            wide.append(Self.newTodo(on: days[random.index(dayCount)], random: &random))
        }
        self.wide = wide
    }

    private static func newTodo(on day: String, random: inout SplitMix64) -> WideTodo {
        let created = Workload.dayStart(day).addingTimeInterval(Double(random.index(86_400_000)) / 1000)
        let title = title(&random)
        let done = random.unit() < 0.5
        let roll = random.unit()
        let priority = roll < 0.3 ? 0 : roll < 0.6 ? 1 : roll < 0.8 ? 2 : roll < 0.98 ? 3 : 4
        let estimate = Double(random.index(160)) / 4
        let updated = created.addingTimeInterval(Double(random.index(30 * 86_400)))
        let due = random.unit() < 0.4 ? Workload.dayStart(day).addingTimeInterval(Double(1 + random.index(14)) * 86_400) : nil
        let notesLength = 60 + random.index(80)
        let notes = random.unit() < 0.3 ? sentence(&random, length: notesLength) : nil
        let tags = (0..<random.index(4)).map { _ in tagNames[random.index(tagNames.count)] }
        var place: WideTodo.Place?
        if random.unit() < 0.2 {
            place = WideTodo.Place(
                name: placeNames[random.index(placeNames.count)],
                latitude: Double(random.index(1_800_000)) / 10_000 - 90,
                longitude: Double(random.index(3_600_000)) / 10_000 - 180)
        }
        return WideTodo(
            id: Workload.uuid(&random), title: title, done: done, day: day, priority: priority, estimate: estimate,
            createdAt: created, updatedAt: updated, dueAt: due, notes: notes, tags: tags, place: place,
            project: projects[random.index(projects.count)])
    }

    /// A title of about 40 characters of filler, with each planted word at its share.
    private static func title(_ random: inout SplitMix64) -> String {
        var words = sentence(&random, length: 32).split(separator: " ").map(String.init)
        for (word, share) in plantedWords where random.unit() < share {
            words.insert(word, at: random.index(words.count + 1))
        }
        return words.joined(separator: " ")
    }

    private static func sentence(_ random: inout SplitMix64, length: Int) -> String {
        var text = ""
        while text.count < length {
            if !text.isEmpty { text += " " }
            text += fillers[random.index(fillers.count)]
        }
        return text
    }

    private static let fillers = [
        "buy", "milk", "call", "mom", "review", "pull", "request", "fix", "the", "bike", "book",
        "flight", "to", "Lisbon", "water", "plants", "send", "report", "for", "October", "read",
        "chapter", "three", "plan", "sprint", "meeting", "notes", "clean", "kitchen", "renew",
        "passport", "pay", "rent", "walk", "dog", "prepare", "slides", "at", "noon", "garden",
    ]
    private static let tagNames = ["errand", "family", "health", "money", "work", "garden", "travel"]
    private static let placeNames = ["home", "office", "gym", "school", "market", "station"]
    private static let projects = ["home", "work", "side project", "school", "travel", "health"]
}

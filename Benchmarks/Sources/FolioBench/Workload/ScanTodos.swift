import Foundation

/// The two shapes of entity the scan matrix (Runner+ScanMatrix.swift) scans: a narrow todo, three
/// stored fields besides its id, and a wide one, twelve, with dates, optionals that are sometimes
/// `null` and sometimes missing, nested values, numbers and strings. The narrow todo is the wide
/// one's first fields, so both shapes hold the same titles, flags and days.
struct NarrowTodo: Codable, Sendable, Equatable, Identifiable {
    var id: String
    var title: String
    var done: Bool
    /// `YYYY-MM-DD`: Folio's day partition, GRDB's indexed column.
    var day: String

    init(_ wide: WideTodo) {
        (id, title, done, day) = (wide.id, wide.title, wide.done, wide.day)
    }
}

struct WideTodo: Codable, Sendable, Equatable, Identifiable {
    var id: String
    var title: String
    var done: Bool
    var day: String
    /// 0–4, 4 the rarest.
    var priority: Int
    /// Hours, in quarters, 0 to 39.75.
    var estimate: Double
    var createdAt: Date
    var updatedAt: Date
    /// Written as `null` when there is none.
    var dueAt: Date?
    /// Left out of the JSON when there is none.
    var notes: String?
    var tags: [String]
    /// Left out of the JSON when there is none.
    var place: Place?
    var project: String

    struct Place: Codable, Sendable, Equatable {
        var name: String
        var latitude: Double
        var longitude: Double
    }

    enum CodingKeys: String, CodingKey {
        case id, title, done, day, priority, estimate, createdAt, updatedAt, dueAt, notes, tags, place, project
    }

    /// As synthesized, but for `dueAt`, written as `null` when absent: files then hold both
    /// kinds of empty optional, as files written by several versions of an app do.
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(title, forKey: .title)
        try container.encode(done, forKey: .done)
        try container.encode(day, forKey: .day)
        try container.encode(priority, forKey: .priority)
        try container.encode(estimate, forKey: .estimate)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(updatedAt, forKey: .updatedAt)
        try container.encode(dueAt, forKey: .dueAt)
        try container.encodeIfPresent(notes, forKey: .notes)
        try container.encode(tags, forKey: .tags)
        try container.encodeIfPresent(place, forKey: .place)
        try container.encode(project, forKey: .project)
    }
}

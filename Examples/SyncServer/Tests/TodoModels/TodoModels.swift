public import Folio
public import Foundation

// The TyTE models as the app (Examples/TodoApp) declares them: the JSON the server must accept
// and produce. Shared by the server's tests and their sync child process.

public struct Todo: Entity, Equatable {
    public static let collection = "todos"
    public static let partitioning = Partitioning<Todo>.day(\.date)
    public static let syncMode = SyncMode.push(coalescing: true)

    public var id: UUID
    public var title: String
    public var date: String
    public var done: Bool
    public var priority: Int
    public var tagID: String?
    public var createdAt: Date
    public var updatedAt: Date

    public init(
        id: UUID, title: String, date: String, done: Bool = false, priority: Int = 0, tagID: String? = nil,
        createdAt: Date = Date(timeIntervalSince1970: 1_790_000_000), updatedAt: Date = Date(timeIntervalSince1970: 1_790_000_000)
    ) {
        self.id = id
        self.title = title
        self.date = date
        self.done = done
        self.priority = priority
        self.tagID = tagID
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}

public struct Tag: Entity, Equatable {
    public static let collection = "tags"
    public static let partitioning = Partitioning<Tag>.none
    public static let syncMode = SyncMode.push

    public var id: String
    public var name: String
    public var color: String

    public init(id: String, name: String, color: String) {
        self.id = id
        self.name = name
        self.color = color
    }
}

public struct TagStat: Codable, Sendable, Equatable {
    public var id: String
    public var tagID: String
    public var count: Int

    public init(id: String, tagID: String, count: Int) {
        self.id = id
        self.tagID = tagID
        self.count = count
    }
}

public struct DailyStat: Entity, Equatable {
    public static let collection = "dailyStats"
    public static let partitioning = Partitioning<DailyStat>.month(\.date)
    public static let syncMode = SyncMode.pullOnly

    public var id: String
    public var date: String
    public var total: Int
    public var completed: Int
    public var tagStats: [TagStat]
}

import Folio
import Foundation

// The TyTE models as the app (Examples/TodoApp) declares them: the JSON the server must accept
// and produce.

struct Todo: Entity, Equatable {
    static let collection = "todos"
    static let partitioning = Partitioning<Todo>.day(\.date)
    static let syncMode = SyncMode.push(coalescing: true)

    var id: UUID
    var title: String
    var date: String
    var done: Bool = false
    var priority: Int = 0
    var tagID: String?
    var createdAt = Date(timeIntervalSince1970: 1_790_000_000)
    var updatedAt = Date(timeIntervalSince1970: 1_790_000_000)
}

struct Tag: Entity, Equatable {
    static let collection = "tags"
    static let partitioning = Partitioning<Tag>.none
    static let syncMode = SyncMode.push

    var id: String
    var name: String
    var color: String
}

struct TagStat: Codable, Sendable, Equatable {
    var id: String
    var tagID: String
    var count: Int
}

struct DailyStat: Entity, Equatable {
    static let collection = "dailyStats"
    static let partitioning = Partitioning<DailyStat>.month(\.date)
    static let syncMode = SyncMode.pullOnly

    var id: String
    var date: String
    var total: Int
    var completed: Int
    var tagStats: [TagStat]
}

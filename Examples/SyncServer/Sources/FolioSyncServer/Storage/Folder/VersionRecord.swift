import Folio

/// The version of one entity, which is also its place in the change feed.
///
/// A version is the server-wide change sequence number of the entity's last change: it only
/// grows, is never reused (a re-created entity gets a new one), and orders the feed
/// (`GET {collection}?since=`). A deleted entity keeps its record as a tombstone (`deleted`), so
/// the feed can tell clients about the deletion. The records live next to their entities: a
/// todo's in `todoVersions/<YYYY-MM>/<YYYY-MM-DD>.json`, under the todo's id.
protocol VersionRecord: Entity where ID == String {
    /// The change sequence number of the entity's last change.
    var sequence: Int64 { get }
    /// Whether that change deleted it.
    var deleted: Bool { get }
    /// The partition of the entity it versions.
    var partitionKey: String { get }
    init(id: String, partitionKey: String, sequence: Int64, deleted: Bool)
}

/// The version of a todo: `todoVersions/<YYYY-MM>/<YYYY-MM-DD>.json`.
struct TodoVersion: VersionRecord {
    static let collection = "todoVersions"
    static let partitioning = Partitioning<TodoVersion>.day(\.date)

    var id: String
    var date: String
    var sequence: Int64
    var deleted: Bool

    var partitionKey: String { date }

    init(id: String, partitionKey: String, sequence: Int64, deleted: Bool) {
        (self.id, self.date, self.sequence, self.deleted) = (id, partitionKey, sequence, deleted)
    }
}

/// The version of a tag: `tagVersions.json`.
struct TagVersion: VersionRecord {
    static let collection = "tagVersions"
    static let partitioning = Partitioning<TagVersion>.none

    var id: String
    var sequence: Int64
    var deleted: Bool

    var partitionKey: String { "" }

    init(id: String, partitionKey: String, sequence: Int64, deleted: Bool) {
        (self.id, self.sequence, self.deleted) = (id, sequence, deleted)
    }
}

/// The version of a day's statistics: `dailyStatVersions/<YYYY-MM>.json`.
struct DailyStatVersion: VersionRecord {
    static let collection = "dailyStatVersions"
    static let partitioning = Partitioning<DailyStatVersion>.month(\.month)

    var id: String
    var month: String
    var sequence: Int64
    var deleted: Bool

    var partitionKey: String { month }

    init(id: String, partitionKey: String, sequence: Int64, deleted: Bool) {
        (self.id, self.month, self.sequence, self.deleted) = (id, partitionKey, sequence, deleted)
    }
}

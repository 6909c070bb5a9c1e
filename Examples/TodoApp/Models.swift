// The fields' comments are aligned in a column, a table of the model: the formatter leaves this
// file as it is written.
// swift-format-ignore-file
import Folio
import Foundation

// The TyTE data model (SEEDS.md). The reference server (Examples/SyncServer) reads and writes the
// same JSON, so field names and types here are part of the protocol between the two.

/// A todo, stored in one file per day (`todos/2026-11/2026-11-22.json`) and pushed to the server.
struct Todo: Entity {
    static let collection = "todos"
    static let partitioning = Partitioning<Todo>.day(\.date)
    // Coalescing: ten offline edits of one todo reach the server as one request with the final state.
    static let syncMode = SyncMode.push(coalescing: true)

    var id = UUID()          // made here, so creating a todo works offline
    var title: String
    var date: String         // "YYYY-MM-DD"
    var done = false
    var priority = 0         // 0...3
    var tagID: String?       // absent from the JSON when nil
    var createdAt = Date()
    var updatedAt = Date()
}

/// A tag, all of them in one file (`tags.json`) and pushed to the server.
struct Tag: Entity {
    static let collection = "tags"
    static let partitioning = Partitioning<Tag>.none
    static let syncMode = SyncMode.push

    var id = UUID().uuidString
    var name: String
    var color: String        // "#RRGGBB"
}

/// One day's productivity: derived from that day's todos. The server computes it; the app computes
/// the same thing locally after each change (Stats.swift) so it is right while offline, and takes
/// the server's value at every sync (`pullOnly`: never pushed).
struct DailyStat: Entity, Equatable {
    static let collection = "dailyStats"
    static let partitioning = Partitioning<DailyStat>.month(\.date)   // dailyStats/2026-11.json
    static let syncMode = SyncMode.pullOnly

    var id: String           // the date: one stat per day
    var date: String
    var total: Int           // todos that day
    var completed: Int       // done todos that day
    var tagStats: [TagStat]  // sorted by tagID
}

/// How many done todos of one tag a day has.
struct TagStat: Codable, Sendable, Equatable {
    var id: String           // "<date>:<tagID>"
    var tagID: String
    var count: Int
}

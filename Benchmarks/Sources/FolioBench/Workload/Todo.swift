import Foundation

/// The TyTE todo (SEEDS.md), the one record every contender stores. Folio stores it as an
/// `Entity` (Contenders/Folio+Todo.swift), GRDB as a record in a `todo` table with an index on
/// `date` (Contenders/GRDB+Todo.swift).
struct Todo: Codable, Sendable, Equatable, Identifiable {
    var id: String
    var title: String
    /// The day it belongs to, `YYYY-MM-DD`: Folio's partition, GRDB's indexed column.
    var date: String
    var done: Bool
    var priority: Int
    var tagID: String?
    var createdAt: Date
    var updatedAt: Date
}

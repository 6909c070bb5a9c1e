import Folio
import Foundation

// The scan matrix's todos as Folio entities: day-partitioned, local only (seeded as data already
// synced), each shape in a store of its own.
extension NarrowTodo: Entity {
    static let collection = "narrow"
    static let partitioning = Partitioning<NarrowTodo>.day(\.day)
}

extension WideTodo: Entity {
    static let collection = "wide"
    static let partitioning = Partitioning<WideTodo>.day(\.day)
}

import Folio

/// The collections of the TyTE data model this server serves; any other name is a 404.
enum CollectionKind: String, CaseIterable, Sendable {
    /// Day-partitioned todos, written by clients.
    case todos
    /// Tags, one file, written by clients.
    case tags
    /// Month-partitioned statistics the server computes from the todos; read-only for clients.
    case dailyStats

    /// The partition keys a pull by partition takes.
    var granularity: PartitionGranularity {
        switch self {
        case .todos: .day
        case .tags: .none
        case .dailyStats: .month
        }
    }

    /// Whether clients may `PUT` and `DELETE` its entities.
    var isWritable: Bool { self != .dailyStats }

    /// Checks a pull's `partition=` value against the granularity.
    /// - Throws: ``RequestError`` (400, field `partition`).
    func validatePartition(_ key: String) throws(RequestError) {
        let valid: Bool
        let expected: String
        switch granularity {
        case .day: (valid, expected) = (Names.isDay(key), "a day YYYY-MM-DD")
        case .month: (valid, expected) = (Names.isMonth(key), "a month YYYY-MM")
        case .none: (valid, expected) = (key.isEmpty, "empty (the collection has one partition)")
        }
        guard valid else {
            throw RequestError(400, "\(rawValue) are pulled by partition \(expected), not \(key.debugDescription)", field: "partition")
        }
    }
}

public import Foundation

/// Which partition files a query reads. Choosing few keeps queries fast: Folio reads only the
/// files selected, never the whole collection unless asked for `.all`.
public enum PartitionSelection: Sendable, Equatable {
    /// Every partition of the collection.
    case all
    /// One day, `"YYYY-MM-DD"` (day-partitioned collections).
    case day(String)
    /// The days from `from` through `through`, both included (day-partitioned collections).
    case days(from: String, through: String)
    /// One month, `"YYYY-MM"`: its file, or all its day files.
    case month(String)
    /// The months from `from` through `through`, both included.
    case months(from: String, through: String)
}

/// A description of entities to fetch: which partitions, which entities in them, in what order,
/// and how many.
///
/// ```swift
/// let open = Query<Todo>(.day("2026-11-22"), where: #Predicate { !$0.done },
///                        sortedBy: [SortDescriptor(\.title)], limit: 20)
/// let todos = try await store.fetch(open)
/// ```
///
/// Without sort descriptors, results come in file order: by partition, then by id.
///
/// Over many partitions, a predicate built from `&&`, `||`, `!`, comparisons, `contains` and
/// `starts(with:)` on `String`, `Bool`, `Int`, `Int64` and `Double` properties (each decoded from
/// one top-level field) is evaluated on the files' fields, and only matching entities are decoded:
/// such queries over years of files are several times faster. Any other predicate gives the same
/// results by decoding every entity.
public struct Query<E: Entity>: Sendable {
    /// The partitions to read.
    public var selection: PartitionSelection
    /// Keeps only the entities for which it evaluates to true.
    public var predicate: Predicate<E>?
    /// The order of the results; applied before `offset` and `limit`.
    public var sortDescriptors: [SortDescriptor<E>]
    /// The most results to return.
    public var limit: Int?
    /// How many results to skip first.
    public var offset: Int

    /// Creates a query.
    /// - Parameters:
    ///   - selection: The partitions to read (default: all).
    ///   - predicate: Keeps only matching entities.
    ///   - sortDescriptors: The order of the results.
    ///   - limit: The most results to return.
    ///   - offset: How many results to skip.
    public init(
        _ selection: PartitionSelection = .all, where predicate: Predicate<E>? = nil,
        sortedBy sortDescriptors: [SortDescriptor<E>] = [], limit: Int? = nil, offset: Int = 0
    ) {
        self.selection = selection
        self.predicate = predicate
        self.sortDescriptors = sortDescriptors
        self.limit = limit
        self.offset = offset
    }

    /// The entities the predicate keeps, in their order.
    func matching(_ entities: [E]) throws(FolioError) -> [E] {
        guard let predicate else { return entities }
        do { return try entities.filter { try predicate.evaluate($0) } } catch {
            throw FolioError(.predicateFailed, "the query's predicate threw: \(error)")
        }
    }

    /// Applies the order, offset and limit to matching entities in partition order.
    func ordered(_ entities: [E]) -> [E] {
        var result = entities
        if !sortDescriptors.isEmpty { result.sort(using: sortDescriptors) }
        guard offset > 0 || limit != nil else { return result }
        let start = min(max(offset, 0), result.count)
        let end = limit.map { min(start + max($0, 0), result.count) } ?? result.count
        return Array(result[start..<end])
    }
}

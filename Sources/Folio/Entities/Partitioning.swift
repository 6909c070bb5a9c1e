public import Foundation

/// The size of a collection's files: one per day, one per month, or one for the whole collection.
public enum PartitionGranularity: String, Sendable, Codable {
    /// `day`: one file per day, `todos/2026-11/2026-11-22.json`; `month`: one file per month,
    /// `dailyStats/2026-11.json`; `none`: one file for the whole collection, `tags.json`.
    case day, month, none
}

/// How an entity type's collection is split into files.
///
/// - `day`: one file per day, `todos/2026-11/2026-11-22.json`.
/// - `month`: one file per month, `dailyStats/2026-11.json`.
/// - `none`: one file for the whole collection, `tags.json`.
///
/// The partition is computed from the entity itself, so moving an entity to another day is just an
/// upsert with its new date: Folio removes it from the old file and adds it to the new one in the
/// same transaction.
public struct Partitioning<E>: Sendable {
    /// The granularity of a partitioning.
    public typealias Granularity = PartitionGranularity

    /// The granularity: one file per day, per month, or one for all.
    public let granularity: Granularity
    let key: @Sendable (E) throws(FolioError) -> String

    /// One file for the whole collection.
    public static var none: Partitioning<E> {
        Partitioning(granularity: .none) { _ throws(FolioError) in "" }
    }

    /// One file per day, from a `"YYYY-MM-DD"` string of the entity.
    /// - Parameter day: Reads the entity's day, e.g. `\.date`.
    /// - Returns: The partitioning. Saving an entity whose day is not a valid `YYYY-MM-DD` date
    ///   throws ``FolioError/Code/invalidName``.
    public static func day(_ day: @escaping @Sendable (E) -> String) -> Partitioning<E> {
        Partitioning(granularity: .day) { entity throws(FolioError) in
            try PartitionKey.validDay(day(entity)).text
        }
    }

    /// One file per day, from a `Date` of the entity, taken as a calendar day in `timeZone`.
    /// - Parameters:
    ///   - date: Reads the entity's date, e.g. `\.dueDate`.
    ///   - timeZone: The time zone the day is counted in. Choose it once: changing it later moves
    ///     no existing entity, but puts new writes of an entity near midnight into another file.
    /// - Returns: The partitioning.
    public static func day(_ date: @escaping @Sendable (E) -> Date, in timeZone: TimeZone) -> Partitioning<E> {
        Partitioning(granularity: .day) { entity throws(FolioError) in
            PartitionKey.day(of: date(entity), in: timeZone).text
        }
    }

    /// One file per month, from a `"YYYY-MM"` or `"YYYY-MM-DD"` string of the entity.
    /// - Parameter month: Reads the entity's month or day, e.g. `\.date`.
    /// - Returns: The partitioning.
    public static func month(_ month: @escaping @Sendable (E) -> String) -> Partitioning<E> {
        Partitioning(granularity: .month) { entity throws(FolioError) in
            try PartitionKey.validMonth(fromDayOrMonth: month(entity)).text
        }
    }

    /// One file per month, from a `Date` of the entity, taken in `timeZone`.
    /// - Parameters:
    ///   - date: Reads the entity's date.
    ///   - timeZone: The time zone the month is counted in.
    /// - Returns: The partitioning.
    public static func month(_ date: @escaping @Sendable (E) -> Date, in timeZone: TimeZone) -> Partitioning<E> {
        Partitioning(granularity: .month) { entity throws(FolioError) in
            String(PartitionKey.day(of: date(entity), in: timeZone).text.prefix(7))
        }
    }
}

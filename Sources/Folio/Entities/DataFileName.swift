/// The one place where data file names and paths become partitions and back (FORMAT.md, "Folder
/// layout"): `tags.json`, `dailyStats/2026-11.json`, `todos/2026-11/2026-11-22.json`.
///
/// Every reader of the folder (loading, scans, the folder watcher, the copy check, `folio verify`,
/// migrations) asks here, so they agree on what is a data file: a valid collection name, real
/// calendar dates (year 0001–9999), and a day file only inside its own month's folder. Pure
/// functions; which layout a store registered for a collection is the store's business.
enum DataFileName {
    static let suffix = ".json"

    /// The month a file name `YYYY-MM.json` names, or nil.
    static func month(fileName name: String) -> PartitionKey? {
        stem(name).flatMap { PartitionKey.month(parsing: String($0)) }
    }

    /// The day a file name `YYYY-MM-DD.json` names, or nil.
    static func day(fileName name: String) -> PartitionKey? {
        stem(name).flatMap { PartitionKey.day(parsing: String($0)) }
    }

    /// The day a file name names when it lies in the folder of its own month, else nil
    /// (`2026-12-01.json` in `2026-11/` is no partition file).
    static func day(fileName name: String, inMonthFolder month: String) -> PartitionKey? {
        guard let key = day(fileName: name), key.month == month else { return nil }
        return key
    }

    /// Whether a folder name is a month folder, `YYYY-MM`.
    static func isMonthFolder(_ name: String) -> Bool { PartitionKey.month(parsing: name) != nil }

    /// The partition a path relative to the store's folder names, or nil when it names none.
    static func address(of path: String) -> PartitionAddress? {
        guard let stem = stem(path) else { return nil }
        let parts = stem.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        let collection = parts[0]
        do { try Names.validateCollection(collection) } catch { return nil }
        switch parts.count {
        case 1:
            guard path != StoreLayout.marker else { return nil }
            return PartitionAddress(collection: collection, granularity: .none, key: .whole)
        case 2:
            guard let key = PartitionKey.month(parsing: parts[1]) else { return nil }
            return PartitionAddress(collection: collection, granularity: .month, key: key)
        case 3:
            guard let key = PartitionKey.day(parsing: parts[2]), key.month == parts[1] else { return nil }
            return PartitionAddress(collection: collection, granularity: .day, key: key)
        default:
            return nil
        }
    }

    /// The path of a partition's file: the inverse of ``address(of:)``.
    static func path(of address: PartitionAddress) -> String {
        StoreLayout.path(collection: address.collection, granularity: address.granularity, key: address.key)
    }

    /// `name` without `.json`; nil when it does not end so.
    static func stem(_ name: String) -> Substring? {
        guard name.hasSuffix(suffix) else { return nil }
        return name.dropLast(suffix.utf8.count)
    }
}

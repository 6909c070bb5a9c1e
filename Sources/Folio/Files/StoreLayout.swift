/// Where everything lives inside a store's folder (FORMAT.md specifies the same).
///
/// ```
/// folio.json                          format marker
/// tags.json                           collection "tags", unpartitioned
/// todos/2026-11/2026-11-22.json       collection "todos", by day
/// dailyStats/2026-11.json             collection "dailyStats", by month
/// .folio/lock                         the writers' flock
/// .folio/journal                      the write-ahead journal
/// .folio/tmp/                         temp files of atomic replaces (safe to exclude from copies)
/// ```
enum StoreLayout {
    static let marker = "folio.json"
    static let machinery = ".folio"
    static let lockFile = ".folio/lock"
    static let journal = ".folio/journal"
    static let tempFolder = ".folio/tmp"
    static let formatVersion: Int64 = 1

    /// The file that holds one partition of a collection.
    static func path(collection: String, granularity: PartitionGranularity, key: PartitionKey) -> String {
        switch granularity {
        case .none: return collection + ".json"
        case .month: return collection + "/" + key.text + ".json"
        case .day: return collection + "/" + key.month + "/" + key.text + ".json"
        }
    }
}

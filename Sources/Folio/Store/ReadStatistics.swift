/// What the store's reads did, counted: partition files read (first loads and reloads), files a
/// query scanned field by field without loading them, files a query filtered on the field index,
/// and of those the files whose matches it built from the index's columns. Statistics for ``Store`` `cacheFootprint()` and tests; the count of files read also
/// tells a process that reads many files that `.folio/written` is worth reading.
struct ReadStatistics {
    private(set) var fileLoads = 0
    private(set) var partitionsScanned = 0
    private(set) var partitionsFromFieldIndex = 0
    private(set) var partitionsFromColumns = 0

    /// A partition file was read (first load or reload).
    mutating func noteFileLoad() { fileLoads += 1 }
    /// A query scanned a partition file field by field.
    mutating func noteScanned() { partitionsScanned += 1 }
    /// A query filtered a partition on the field index.
    mutating func noteFromFieldIndex() { partitionsFromFieldIndex += 1 }
    /// Of those, a query built the matches from the index's columns, the file not opened.
    mutating func noteFromColumns() { partitionsFromColumns += 1 }
}

/// What the partition cache holds, for tests and diagnostics.
extension Store {
    struct CacheFootprint: Sendable {
        /// Estimated bytes of every cached partition.
        var estimatedBytes: Int
        /// Estimated bytes of the cached partitions that must stay.
        var mustStayBytes: Int
        /// The paths of the cached partitions.
        var paths: Set<String>
        var evictions: Int
        /// Partition files queries read field by field without loading them.
        var partitionsScanned: Int
        /// Of those, the ones filtered on the field index (the file itself not read whole).
        var partitionsFromFieldIndex: Int
        /// Of those, the ones whose matches were built from the index's columns (the file not opened).
        var partitionsFromColumns: Int
    }

    func cacheFootprint() -> CacheFootprint {
        engine.cacheFootprint
    }
}

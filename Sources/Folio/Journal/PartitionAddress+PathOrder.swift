extension Sequence<PartitionAddress> {
    /// The addresses in path order (as `sorted()`), each path built once: `<` builds both paths
    /// at every comparison, which made sorting a commit's hundred partitions (a window of
    /// acknowledgements) a visible share of the commit.
    func sortedByPath() -> [PartitionAddress] {
        map { (path: $0.path, address: $0) }.sorted { $0.path < $1.path }.map(\.address)
    }
}

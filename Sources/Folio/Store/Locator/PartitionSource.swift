/// What the id locator (``IdLocator``) needs of the partitions, answered by the store's engine:
/// the locator finds where ids live, the engine loads and holds the partitions.
protocol PartitionSource: AnyObject {
    /// The partition at `address`, loaded if needed; with `verify`, read again if its file changed.
    func partition(_ address: PartitionAddress, verify: Bool) throws(FolioError) -> Partition
    /// The addresses of a collection's partitions a selection covers, in path order: files on disk
    /// plus partitions that exist so far only in the journal.
    func addresses(collection: String, granularity: PartitionGranularity, selection: PartitionSelection) throws(FolioError) -> [PartitionAddress]
    /// Whether what the engine holds of a partition is exactly its file (then what the saved id
    /// index says of the file holds for the partition).
    func memoryIsFile(_ address: PartitionAddress) -> Bool
    /// Whether what the engine holds of every partition of `collection` is exactly its file: the
    /// journal's current records change none, and each in memory may leave it.
    func memoryIsFiles(in collection: String) -> Bool
    /// The identity of the file a partition in memory was read from (nil: not in memory, or no file).
    func identityInMemory(of address: PartitionAddress) -> FileIdentity?
    /// During a read's lock-free pass, notes that finding an id needs files (which the locked
    /// pass reads) and returns true; otherwise false.
    func putOffFileLoadIfLockFree() -> Bool
}

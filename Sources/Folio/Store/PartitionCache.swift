/// The partitions this process holds in memory, within a byte budget.
///
/// Reading a partition file costs a read and a parse; keeping it saves both on the next access,
/// but a process that reads years of data must not keep them all. The cache keeps the partitions
/// used most recently while their estimated size (``Partition/estimatedBytes``, charged when a
/// partition is used or recharged) stays within ``budget``, and evicts the least recently used
/// beyond it, except those that must stay (which may exceed the budget alone)
/// (`mustStay`, decided by the store: a partition with uncommitted-to-file records, a merge, a
/// pending hand edit, a broken file whose last good state is served, one observed) and the one
/// just inserted (its caller is using it). An evicted partition is clean: its file holds exactly
/// what it served, so reading the file again gives the same state.
///
/// The cache only decides what stays; it never reads a file. `onEvict` lets its owner remember
/// what it needs of an evicted partition (the file identity its id index was built from).
final class PartitionCache {
    /// The most bytes the partitions that may leave occupy; 0 keeps only what must stay (and the
    /// partition in use).
    var budget: Int
    /// Whether a partition must stay in memory whatever the budget.
    var mustStay: (Partition) -> Bool = { _ in false }
    /// Whether every partition must stay for now (the store is observed): nothing is evicted.
    var holdsEverything: () -> Bool = { false }
    /// Called for each partition the cache evicts.
    var onEvict: (Partition) -> Void = { _ in }
    /// How many partitions were evicted so far.
    private(set) var evictions = 0
    /// The hash of the file each evicted partition held (until it is cached again): with the
    /// versions Folio keeps, what it served can be had again (the last good state of a file
    /// broken since, the state an outside change is announced against).
    private(set) var departed: [PartitionAddress: ContentHash] = [:]

    private var entries: [PartitionAddress: (partition: Partition, lastUse: UInt64, charge: Int)] = [:]
    /// The sum of the charges: each partition's estimated bytes when last used or recharged.
    private(set) var chargedBytes = 0
    /// Uses in order (oldest first, from `head`); an element whose tick is no longer its
    /// partition's `lastUse` is stale and skipped.
    private var uses: [(address: PartitionAddress, tick: UInt64)] = []
    private var head = 0
    private var clock: UInt64 = 0

    init(budget: Int) {
        self.budget = budget
    }

    /// The cached partition, marked as just used.
    subscript(address: PartitionAddress) -> Partition? {
        guard let entry = entries[address] else { return nil }
        use(address, entry.partition)
        return entry.partition
    }

    /// The cached partition, without marking it used.
    func peek(_ address: PartitionAddress) -> Partition? {
        entries[address]?.partition
    }

    func contains(_ address: PartitionAddress) -> Bool {
        entries[address] != nil
    }

    /// Every cached partition, in no particular order.
    var partitions: [Partition] { entries.values.map(\.partition) }

    /// Every cached address, in order.
    var addresses: [PartitionAddress] { entries.keys.sorted() }

    var count: Int { entries.count }

    /// The estimated bytes of every cached partition, as they are now.
    var estimatedBytes: Int { entries.values.reduce(0) { $0 + $1.partition.estimatedBytes } }

    /// The estimated bytes of the cached partitions that must stay, as they are now.
    var mustStayBytes: Int {
        entries.values.reduce(0) { mustStay($1.partition) ? $0 + $1.partition.estimatedBytes : $0 }
    }

    /// Caches a partition (replacing one at its address) as just used, then evicts beyond the
    /// budget, never this one.
    func insert(_ partition: Partition) {
        use(partition.address, partition)
        trim(keeping: partition.address)
    }

    /// Takes note of a cached partition's new size (it decoded its entities, or was reloaded).
    func recharge(_ partition: Partition) {
        guard let entry = entries[partition.address], entry.partition === partition else { return }
        let charge = partition.estimatedBytes
        chargedBytes += charge - entry.charge
        entries[partition.address]!.charge = charge
    }

    /// Forgets a partition without calling `onEvict`.
    func remove(_ address: PartitionAddress) {
        if let entry = entries.removeValue(forKey: address) { chargedBytes -= entry.charge }
    }

    /// Evicts least recently used partitions that may leave until the cached partitions fit the
    /// budget (those that must stay may exceed it alone), never `keeping`, the one in use.
    func trim(keeping: PartitionAddress? = nil) {
        guard chargedBytes > budget, !holdsEverything() else { return }
        // One pass over the uses recorded so far: each partition's latest use is met once.
        let end = uses.count
        var retained: [(address: PartitionAddress, tick: UInt64)] = []
        while head < end && chargedBytes > budget {
            let use = uses[head]
            head += 1
            guard let entry = entries[use.address], entry.lastUse == use.tick else { continue }
            if use.address == keeping || mustStay(entry.partition) {
                retained.append(use)
                continue
            }
            chargedBytes -= entry.charge
            entries[use.address] = nil
            evictions += 1
            if let hash = entry.partition.fileHash { departed[use.address] = hash }
            onEvict(entry.partition)
        }
        // Partitions that must stay keep their place in the order, ahead of newer uses.
        if !retained.isEmpty {
            head -= retained.count
            for (offset, use) in retained.enumerated() { uses[head + offset] = use }
        }
        compact()
    }

    private func use(_ address: PartitionAddress, _ partition: Partition) {
        clock += 1
        let charge = partition.estimatedBytes
        if let entry = entries[address] {
            chargedBytes -= entry.charge
        } else {
            departed[address] = nil
        }
        chargedBytes += charge
        entries[address] = (partition, clock, charge)
        uses.append((address, clock))
        compact()
    }

    /// Drops the stale uses at the front once they dominate the list.
    private func compact() {
        guard head > 1024, head * 2 > uses.count else { return }
        uses.removeFirst(head)
        head = 0
        if uses.count > entries.count * 4 + 1024 {
            uses.removeAll { entries[$0.address]?.lastUse != $0.tick }
        }
    }
}

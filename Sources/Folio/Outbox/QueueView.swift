/// The queue as ``OutboxBook/head(limit:)`` sees it in one journal generation: the numbers of the
/// files in `outbox/` (listed once: files change only at checkpoints, which start a new
/// generation), with the records' changes on top, taken in as records arrive. A head read then
/// costs what its window holds, not what the generation's records hold (a drain of thousands of
/// commands adds a record per window, and read them all again at every window).
struct QueueView {
    let generation: UInt64
    /// The numbers of the files in `outbox/`, sorted.
    let listed: [UInt64]
    /// How many of the generation's records are taken in.
    var recordCount = 0
    /// Listed commands the records took out of the queue (acknowledged, failed, dropped).
    private(set) var removed = Set<UInt64>()
    /// Commands the records put in the queue that have no file in `outbox/`, sorted.
    private(set) var added: [UInt64] = []
    /// Every listed command before this index is removed: a head starts here.
    private(set) var start = 0

    init(generation: UInt64, listed: [UInt64]) {
        self.generation = generation
        self.listed = listed
    }

    /// How many commands are pending.
    var pendingCount: Int { listed.count - removed.count + added.count }

    /// Records whether a command is pending now.
    mutating func set(_ sequence: UInt64, pending: Bool, listed wasListed: Bool) {
        if wasListed {
            if pending {
                guard removed.remove(sequence) != nil else { return }
                // Back in the queue (a failed command retried): the head starts no later than it.
                start = min(start, listed.sortedPosition(of: sequence))
            } else {
                removed.insert(sequence)
                while start < listed.count && removed.contains(listed[start]) { start += 1 }
            }
        } else {
            let position = added.sortedPosition(of: sequence)
            let present = position < added.count && added[position] == sequence
            if pending && !present { added.insert(sequence, at: position) }
            if !pending && present { added.remove(at: position) }
        }
    }

    /// The pending commands' numbers in order, from the first, for as long as `body` says.
    func forEachPending(_ body: (UInt64) throws(FolioError) -> Bool) throws(FolioError) {
        var (nextListed, nextAdded) = (start, 0)
        while true {
            let sequence: UInt64
            if nextListed < listed.count, nextAdded == added.count || listed[nextListed] < added[nextAdded] {
                sequence = listed[nextListed]
                nextListed += 1
                if removed.contains(sequence) { continue }
            } else if nextAdded < added.count {
                sequence = added[nextAdded]
                nextAdded += 1
            } else {
                return
            }
            guard try body(sequence) else { return }
        }
    }
}

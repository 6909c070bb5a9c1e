/// A person's save of a partition file, not yet adopted.
struct HandEdit {
    /// The file as Folio last wrote it (its newest kept version).
    var folio: PartitionFile.Contents
    /// What Folio takes the save to hold (merged with Folio's newer state if it was stale).
    var saved: PartitionFile.Contents
    /// The entities of the file the save replaced, as this process last read it (an earlier save
    /// already adopted, or `folio`); nil when this process had not read it.
    var replaced: [String: JSONValue]? = nil
}

/// The saves by a person that Folio has read and not adopted yet (FORMAT.md, "Editing by
/// hand"): those a partition load found, and those met during a checkpoint's compare-and-swap,
/// merged into Folio's versions, which wait until the partition is read again.
///
/// Adopting them (a journal record, commands for push collections) is the store's business
/// (StoreEngine+HandEdits.swift); this keeps which saves wait, one per partition.
final class HandEdits {
    /// Saves a load found, per partition.
    private var pending: [PartitionAddress: HandEdit] = [:]
    /// Saves met during a compare-and-swap, per partition: pending once the partition is reloaded.
    private var absorbed: [PartitionAddress: HandEdit] = [:]

    /// Notes the save a partition load found, or that it found none (nil).
    func note(_ edit: HandEdit?, at address: PartitionAddress) {
        pending[address] = edit
    }

    /// Notes a save met during a compare-and-swap. Several in a row are one edit, made against
    /// the version Folio wrote before the first.
    func absorb(_ saved: PartitionFile.Contents, madeOn folio: PartitionFile.Contents, at address: PartitionAddress) {
        absorbed[address] = HandEdit(folio: absorbed[address]?.folio ?? folio, saved: saved)
    }

    /// The partition was read again after absorbing saves: they wait like one a load found,
    /// unless the load found one (which already holds them).
    func absorbedBecomePending(at address: PartitionAddress) {
        if pending[address] == nil, let edit = absorbed.removeValue(forKey: address) {
            pending[address] = edit
        }
    }

    /// Whether a save of the partition waits (pending or absorbed).
    func waits(at address: PartitionAddress) -> Bool {
        pending[address] != nil || absorbed[address] != nil
    }

    /// The partitions with a pending save in a collection the predicate accepts, in order.
    func pendingAddresses(where accepts: (String) -> Bool) -> [PartitionAddress] {
        pending.keys.filter { accepts($0.collection) }.sorted()
    }

    /// Whether a pending save is in a collection the predicate accepts.
    func hasPending(where accepts: (String) -> Bool) -> Bool {
        pending.keys.contains { accepts($0.collection) }
    }

    /// Removes and returns a partition's pending save, to adopt it.
    func takePending(at address: PartitionAddress) -> HandEdit? {
        pending.removeValue(forKey: address)
    }
}

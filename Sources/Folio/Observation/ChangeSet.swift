/// What changed in one collection, and where the change came from: the element of
/// ``Store/changes()``.
///
/// Ids are the entities' storage keys (for a `UUID` id, its `uuidString`). An entity moved from one
/// partition to another (a todo moved to another day) is *updated*, not deleted and inserted.
public struct ChangeSet: Sendable, Hashable, CustomStringConvertible {
    /// Where a change came from.
    public enum Origin: String, Sendable, Hashable {
        /// A `write` of this process (of this ``Store``).
        case thisProcess
        /// The sync engine of this process: server state pulled, acknowledgements, conflicts.
        case sync
        /// Another process that opened the same folder (a widget, the `folio` tool, a second app
        /// instance), seen through the journal.
        case otherProcess
        /// A file changed outside Folio: a person's text editor, rsync or a sync tool bringing in
        /// a newer copy.
        case outsideEdit
    }

    /// The collection.
    public var collection: String
    /// Entities that did not exist before.
    public var inserted: Set<String>
    /// Entities whose JSON changed (or that moved to another partition), or whose previous
    /// existence this process could not know (it had never read their file).
    public var updated: Set<String>
    /// Entities that no longer exist.
    public var deleted: Set<String>
    /// Entities whose sync status changed (a command queued, acknowledged, failed, retried or
    /// dropped) while their JSON may not have.
    public var syncStatusChanged: Set<String>
    /// The partition keys concerned ("2026-11-22", "2026-11", or "" for an unpartitioned
    /// collection), old and new.
    public var partitions: Set<String>
    /// Where the change came from.
    public var origin: Origin

    /// Creates a change set (for tests and custom transports; Folio makes them itself).
    public init(
        collection: String, inserted: Set<String> = [], updated: Set<String> = [], deleted: Set<String> = [],
        syncStatusChanged: Set<String> = [], partitions: Set<String> = [], origin: Origin
    ) {
        self.collection = collection
        self.inserted = inserted
        self.updated = updated
        self.deleted = deleted
        self.syncStatusChanged = syncStatusChanged
        self.partitions = partitions
        self.origin = origin
    }

    /// Every id the change set names.
    public var ids: Set<String> { inserted.union(updated).union(deleted).union(syncStatusChanged) }

    /// Whether the entities themselves changed (not only their sync status).
    public var changesEntities: Bool { !inserted.isEmpty || !updated.isEmpty || !deleted.isEmpty }

    /// The change in one line, for logs: `todos (thisProcess): + A,B ~ C - D`.
    public var description: String {
        func list(_ name: String, _ ids: Set<String>) -> String? {
            ids.isEmpty ? nil : "\(name) \(ids.sorted().joined(separator: ","))"
        }
        let parts = [list("+", inserted), list("~", updated), list("-", deleted), list("sync", syncStatusChanged)].compactMap { $0 }
        return "\(collection) (\(origin.rawValue)): " + parts.joined(separator: " ")
    }

    /// Folds a later change of the same collection and origin into this one.
    mutating func merge(_ later: ChangeSet) {
        for id in later.inserted {
            if deleted.remove(id) != nil { updated.insert(id) } else { inserted.insert(id) }
        }
        for id in later.updated where !inserted.contains(id) { updated.insert(id) }
        for id in later.deleted {
            if inserted.remove(id) == nil { deleted.insert(id) }
            updated.remove(id)
        }
        syncStatusChanged.formUnion(later.syncStatusChanged)
        partitions.formUnion(later.partitions)
    }
}

extension ChangeSet {
    /// Change sets in order, each merged into the last one of its collection and origin when no
    /// other of its collection came between (what is delivered at once); empty ones left out.
    static func merging(_ changeSets: [ChangeSet]) -> [ChangeSet] {
        var merged: [ChangeSet] = []
        for changeSet in changeSets {
            if let index = merged.lastIndex(where: { $0.collection == changeSet.collection && $0.origin == changeSet.origin }),
                !merged[(index + 1)...].contains(where: { $0.collection == changeSet.collection })
            {
                merged[index].merge(changeSet)
            } else {
                merged.append(changeSet)
            }
        }
        return merged.filter { !$0.ids.isEmpty }
    }
}

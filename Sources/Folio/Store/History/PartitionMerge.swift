/// Merging a partition file that a person saved from an older version (an editor's stale buffer,
/// a script that read the file before Folio's last checkpoint) with what Folio wrote since
/// (FORMAT.md, "Editing by hand"). Three versions of the file: `base`, the version the person
/// started from; `ours`, the newest version Folio wrote; `theirs`, the file as saved.
///
/// Entity by entity (then the `versions` map and the other top-level members alike):
/// - changed by the person only (theirs differs from base, ours does not): the person's;
/// - changed by Folio only: Folio's (an entity Folio added since is kept, one it deleted stays
///   deleted);
/// - changed by both: field by field (``ThreeWayMerge``), the person's value where both changed
///   the same field; an entity one side deleted and the other changed takes the person's side.
///   Each such entity is reported as a conflict.
enum PartitionMerge {
    struct Result {
        var contents: PartitionFile.Contents
        /// Entities where Folio's newer state was kept over the saved file's.
        var keptFromFolio: [String] = []
        /// Entities both sides changed.
        var conflicts: [String] = []
    }

    /// - Parameter rule: Which side wins a field both changed (and an entity one deleted and the
    ///   other changed).
    static func merge(
        base: PartitionFile.Contents, ours: PartitionFile.Contents, theirs: PartitionFile.Contents,
        rule: EditConflictRule = .fileFirst
    ) -> Result {
        var result = Result(contents: PartitionFile.Contents(entities: [:], extra: [:]))
        for id in Set(base.entities.keys).union(ours.entities.keys).union(theirs.entities.keys) {
            let before = base.entities[id], mine = ours.entities[id], saved = theirs.entities[id]
            let value: JSONValue?
            if saved == before {
                value = mine
                if mine != saved { result.keptFromFolio.append(id) }
            } else if mine == before || mine == saved {
                value = saved
            } else {
                result.conflicts.append(id)
                if let mine, let saved {
                    value =
                        rule == .fileFirst
                        ? ThreeWayMerge.merge(base: before, local: saved, server: mine)
                        : ThreeWayMerge.merge(base: before, local: mine, server: saved)
                } else {
                    value = rule == .fileFirst ? saved : mine
                }
            }
            if let value { result.contents.entities[id] = value }
        }
        // Versions may outlive their entity (a delete not yet acknowledged keeps its version).
        result.contents.versions = mergeValues(base: base.versions, ours: ours.versions, theirs: theirs.versions)
        result.contents.extra = mergeValues(base: base.extra, ours: ours.extra, theirs: theirs.extra)
        result.keptFromFolio.sort()
        result.conflicts.sort()
        return result
    }

    /// A file whose base Folio does not know (no revision, or one it no longer keeps) merged into
    /// Folio's newest version: the file's entities are added and its values applied, and every
    /// entity it lacks stays (an unknown base deletes nothing; FORMAT.md, "Editing by hand").
    /// `keptFromFolio` lists the entities the file lacks, `conflicts` those whose value it changed.
    static func mergeWithoutBase(ours: PartitionFile.Contents, theirs: PartitionFile.Contents) -> Result {
        var result = Result(contents: ours)
        for (id, saved) in theirs.entities where ours.entities[id] != saved {
            if ours.entities[id] != nil { result.conflicts.append(id) }
            result.contents.entities[id] = saved
        }
        result.keptFromFolio = ours.entities.keys.filter { theirs.entities[$0] == nil }.sorted()
        for (id, version) in theirs.versions where ours.versions[id] == nil { result.contents.versions[id] = version }
        for (key, value) in theirs.extra { result.contents.extra[key] = value }
        result.conflicts.sort()
        return result
    }

    /// How many entities differ between two versions (present in one only, or with other JSON).
    static func distance(_ first: [String: JSONValue], _ second: [String: JSONValue]) -> Int {
        first.count { second[$0.key] != $0.value } + second.keys.count { first[$0] == nil }
    }

    /// Key by key: the side that changed it, the person's when both did.
    private static func mergeValues<Value: Equatable>(base: [String: Value], ours: [String: Value], theirs: [String: Value]) -> [String: Value] {
        var merged: [String: Value] = [:]
        for key in Set(base.keys).union(ours.keys).union(theirs.keys) {
            let value = theirs[key] == base[key] ? ours[key] : theirs[key]
            if let value { merged[key] = value }
        }
        return merged
    }
}

/// Merging versions of one data file outside a store, for git (FORMAT.md, "Git"): the merge driver
/// (`folio merge-driver`), given git's merge base and both sides, and `folio resolve`, given a file
/// that git left with conflict markers.
///
/// Both merge per entity, as Folio merges a save (`PartitionMerge`): what one side changed is
/// taken, an entity both sides changed is merged field by field (the incoming side's value first),
/// and the result names the working copy's revision with both sides' ancestors joined, so that the
/// Folio of that copy reads it as an edit of its own revision and merges it exactly.
public enum DataFileMerge {
    /// A merged data file.
    public struct Result: Sendable {
        /// The merged file, in Folio's canonical form.
        public var bytes: [UInt8]
        /// The ids of the entities changed on both sides (merged field by field).
        public var conflicts: [String]
        /// Whether the merge had a base (a file with conflict markers in git's default style has
        /// none: then nothing either side lacks is deleted).
        public var hadBase: Bool
    }

    /// Merges `ours` (the working copy's version, which git replaces with the result) and `theirs`
    /// against `base`, git's merge base. An empty side is a file absent on that side.
    /// - Parameters:
    ///   - base: git's merge base (`%O`).
    ///   - ours: The current branch's version (`%A`).
    ///   - theirs: The other branch's version (`%B`).
    ///   - path: The file's path, for errors (`%P`).
    /// - Returns: The merged file.
    /// - Throws: ``FolioError/Code/corruptFile`` naming the side and its line when one is not a
    ///   data file (then git keeps the conflict for a person).
    public static func merge(base: [UInt8], ours: [UInt8], theirs: [UInt8], path: String) throws(FolioError) -> Result {
        let baseContents = try contents(base, path: path + " (the merge base)")
        let oursContents = try contents(ours, path: path + " (ours)")
        let theirsContents = try contents(theirs, path: path + " (theirs)")
        let merged = PartitionMerge.merge(base: baseContents, ours: oursContents, theirs: theirsContents)
        return result(
            merged, ours: oursContents.namingSave(ContentHash(ours)), theirs: theirsContents.namingSave(ContentHash(theirs)),
            hadBase: true)
    }

    /// Resolves a data file that git left with conflict markers (`<<<<<<<`, `=======`,
    /// `>>>>>>>`, and `|||||||` for the base in the `diff3` and `zdiff3` styles): both sides are
    /// taken apart and merged per entity. With the base (diff3), as ``merge(base:ours:theirs:path:)``;
    /// without it, nothing is deleted: every entity of either side stays, and an entity both have
    /// takes the incoming side's fields first.
    /// - Parameters:
    ///   - bytes: The file as git left it.
    ///   - path: The file's path, for errors.
    /// - Returns: The merged file.
    /// - Throws: ``FolioError/Code/corruptFile`` when the file has no markers, unbalanced ones, or
    ///   a side that is not a data file (naming the line).
    public static func resolve(_ bytes: [UInt8], path: String) throws(FolioError) -> Result {
        let sides = try ConflictMarkers.split(bytes, path: path)
        let oursContents = try contents(sides.ours, path: path + " (ours)")
        let theirsContents = try contents(sides.theirs, path: path + " (theirs)")
        if let base = sides.base {
            let merged = PartitionMerge.merge(base: try contents(base, path: path + " (the merge base)"), ours: oursContents, theirs: theirsContents)
            return result(merged, ours: oursContents, theirs: theirsContents, hadBase: true)
        }
        var merged = PartitionMerge.mergeWithoutBase(ours: oursContents, theirs: theirsContents)
        // Both sides have it and differ: field by field, the incoming side's value first.
        for id in merged.conflicts {
            if let mine = oursContents.entities[id], let saved = theirsContents.entities[id] {
                merged.contents.entities[id] = ThreeWayMerge.merge(base: nil, local: saved, server: mine)
            }
        }
        return result(merged, ours: oursContents, theirs: theirsContents, hadBase: false)
    }

    private static func contents(_ bytes: [UInt8], path: String) throws(FolioError) -> PartitionFile.Contents {
        if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) { return PartitionFile.Contents(entities: [:], extra: [:]) }
        return try PartitionFile.decode(bytes, path: path)
    }

    private static func result(_ merged: PartitionMerge.Result, ours: PartitionFile.Contents, theirs: PartitionFile.Contents, hadBase: Bool) -> Result {
        var contents = merged.contents
        let vector = Revision.join(ours.revision?.vector ?? [:], theirs.revision?.vector ?? [:])
        if let own = ours.revision ?? theirs.revision {
            // The working copy's revision, so its Folio merges the result against it, with every
            // revision either side descends from as ancestors.
            contents.revision = Revision(writer: own.writer, number: own.number, hash: own.hash, ancestors: vector)
        }
        return Result(bytes: PartitionFile.encode(contents), conflicts: merged.conflicts, hadBase: hadBase)
    }
}

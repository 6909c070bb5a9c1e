/// The version a save was made from (FORMAT.md, "Editing by hand", "Every save is merged against
/// the version it was made from"): found from the revisions the file names, never guessed across
/// revisions.
enum MergeBase {
    /// Nothing to merge: the file is an unedited revision that Folio's state already includes (an
    /// older copy put back, an older commit checked out, an unchanged buffer saved).
    case older
    /// The file is a save identical to one already merged: nothing new in it.
    case merged
    /// The version the file was made from.
    case known(KeptVersions.Version, PartitionFile.Contents)
    /// No revision Folio knows: the file adds and updates, it deletes nothing.
    case unknown

    /// Finds the base of `file` among a file's kept versions.
    /// - Parameters:
    ///   - file: The file as read, with its bytes' hash.
    ///   - ours: Folio's newest version of the file.
    ///   - versions: The file's kept versions, oldest first.
    ///   - load: A kept version's content; nil when it is gone or damaged.
    static func find(
        _ file: PartitionFile.Contents, hash: ContentHash, ours: PartitionFile.Contents, oursVersion: KeptVersions.Version,
        versions: [KeptVersions.Version], load: (KeptVersions.Version) -> PartitionFile.Contents?
    ) -> MergeBase {
        let unedited = file.isUneditedRevision
        if unedited, let revision = file.revision, Revision.includes(ours.revision?.vector ?? [:], writer: revision.writer, number: revision.number) {
            return .older
        }
        // The same bytes kept as a save, and merged since (a version of Folio's kept after it).
        // Merged since: a version of Folio's kept after a save holds it (every version Folio keeps
        // is made from its newest, which took the save in when it was read).
        func mergedSince(_ save: KeptVersions.Version) -> Bool { versions.contains { !$0.isEdit && $0.order > save.order } }
        if let save = versions.last(where: { $0.hash == hash && $0.isEdit }), mergedSince(save) {
            return .merged
        }
        guard let revision = file.revision else {
            // A file Folio wrote before revisions existed: Folio wrote no other version of it since.
            return versions.contains { $0.writer != nil } ? .unknown : .known(oursVersion, ours)
        }
        // Per writer, the newest true revision (not a save of it) the file descends from; among
        // writers, the one that includes the most. Every revision kept is one Folio's newest
        // includes: Folio's own, and other copies' kept (as saves read) once merged.
        var candidates: [(version: KeptVersions.Version, contents: PartitionFile.Contents, vector: [String: UInt64])] = []
        for (writer, limit) in revision.vector.sorted(by: { $0.key < $1.key }) {
            if let save = Revision.save(named: writer) {
                // A person's save the file descends from (a conflict resolved, a hand edit, in
                // this copy or in the one that wrote the file): the same bytes kept here.
                guard let version = versions.last(where: { $0.hash == save }), let contents = load(version) else { continue }
                var vector = contents.revision?.vector ?? [:]
                vector[writer] = limit
                candidates.append((version, contents, vector))
                continue
            }
            let named = versions.filter { $0.writer == writer && $0.number <= limit }
                .sorted { ($0.number, $0.order) > ($1.number, $1.order) }
            for version in named {
                guard let contents = load(version), let own = contents.revision, own.writer == writer, own.number == version.number,
                    contents.isUneditedRevision
                else { continue }
                candidates.append((version, contents, own.vector))
                break
            }
        }
        // A candidate another one includes is no better a base; two that do not include each
        // other (each copy merged the other's older revision: a criss-cross) are both bases, and
        // the base is what either holds (virtualBase), so that a delete on either side counts.
        let maximal = candidates.filter { candidate in
            !candidates.contains { other in other.version.name != candidate.version.name && includes(other.vector, candidate.vector) }
        }
        var best: (version: KeptVersions.Version, contents: PartitionFile.Contents, weight: UInt64)?
        if let heaviest = maximal.max(by: { weight($0.vector) < weight($1.vector) }) {
            let contents = maximal.count == 1 ? heaviest.contents : virtualBase(maximal.map(\.contents), file: file, ours: ours)
            best = (heaviest.version, contents, 0)
        }
        // An edit of a revision already saved from (the same buffer saved again): the save nearest
        // to the file, when nearer than the revision itself, and only a save merged since (a
        // version of Folio's kept after it): one only read so far (taken as it was, or by a process
        // that died) is not in Folio's newest, and as a base it would drop its own changes.
        if !unedited {
            var nearest = best.map { PartitionMerge.distance($0.contents.entities, file.entities) } ?? Int.max
            let saves = versions.filter { save in
                save.isRevision(revision.writer, revision.number) && save.hash != hash && save.name != best?.version.name
                    && mergedSince(save)
            }
            for save in saves.reversed() where nearest > 0 {
                guard let contents = load(save), !contents.isUneditedRevision else { continue }
                let distance = PartitionMerge.distance(contents.entities, file.entities)
                if distance < nearest {
                    nearest = distance
                    best = (save, contents, 0)
                }
            }
        }
        return best.map { .known($0.version, $0.contents) } ?? .unknown
    }
}

extension MergeBase {
    /// Whether content naming `first` includes everything content naming `second` does.
    /// A save (``Revision/editKey(_:)``) is included when it is named at all: its value is when a
    /// copy first read it, which differs between copies.
    static func includes(_ first: [String: UInt64], _ second: [String: UInt64]) -> Bool {
        second.allSatisfy { key, value in
            guard let named = first[key] else { return value == 0 }
            return Revision.save(named: key) != nil || named >= value
        }
    }

    /// The base of a criss-cross: every entity either base holds. Where they hold different
    /// values, the one a side still has (that side did not change it), else the first's.
    static func virtualBase(_ bases: [PartitionFile.Contents], file: PartitionFile.Contents, ours: PartitionFile.Contents) -> PartitionFile.Contents {
        var merged = bases[0]
        for id in Set(bases.flatMap(\.entities.keys)) {
            let values = bases.compactMap { $0.entities[id] }
            merged.entities[id] = values.first { $0 == file.entities[id] } ?? values.first { $0 == ours.entities[id] } ?? values.first
        }
        for base in bases.dropFirst() {
            merged.versions.merge(base.versions) { first, _ in first }
        }
        return merged
    }

    /// How much a vector includes: the writers' numbers, and one for each save it names.
    static func weight(_ vector: [String: UInt64]) -> UInt64 {
        vector.reduce(0) { sum, entry in sum &+ (Revision.save(named: entry.key) == nil ? entry.value : 1) }
    }
}

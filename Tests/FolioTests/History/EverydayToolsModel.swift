import Foundation

/// The rules of FORMAT.md ("Revisions", "Editing by hand", `.folio/versions/`) at the level of
/// entities, for EverydayToolsModelTests: what a folder of todos must hold after people's saves,
/// the app's writes, and copies between folders. Nothing here reads Folio's code; it is written
/// from the document alone.
enum EverydayModel {
    /// What the model follows of a todo: its title and done flag.
    struct Item: Equatable, CustomStringConvertible {
        var title: String
        var done: Bool
        var description: String { "\"\(title)\"\(done ? " done" : "")" }
    }

    /// A folder's todos (or a file's, or an editor's buffer), by id.
    typealias State = [String: Item]

    /// A three-way merge at the entity level ("Every save is merged against the version it was
    /// made from"): what only one side changed is that side's (an entity added is kept, one
    /// deleted stays deleted), an entity both changed is merged field by field, the file's value
    /// winning where both changed the same field.
    static func merge(base: State, folio: State, file: State) -> State {
        var merged: State = [:]
        for id in Set(base.keys).union(folio.keys).union(file.keys) {
            let b = base[id], f = folio[id], s = file[id]
            let result: Item?
            if f == s {
                result = f
            } else if f == b {
                result = s
            } else if s == b {
                result = f
            } else if let f, let s {
                let b = b ?? s
                result = Item(title: s.title != b.title ? s.title : f.title, done: s.done != b.done ? s.done : f.done)
            } else {
                result = s ?? f   // deleted on one side, changed on the other: the tests make none
            }
            if let result { merged[id] = result }
        }
        return merged
    }

    /// A save with an unknown base ("An unknown base deletes nothing"): the file's entities are
    /// added and its changes applied, every entity it lacks stays.
    static func mergeWithoutBase(folio: State, file: State) -> State {
        folio.merging(file) { $1 }
    }

    /// What one change did, for the reports.
    enum Change: Equatable {
        case added, retitled, toggled, deleted
    }

    /// The changes from one state to another, by id.
    static func changes(from old: State, to new: State) -> [String: [Change]] {
        var changes: [String: [Change]] = [:]
        for id in Set(old.keys).union(new.keys) {
            switch (old[id], new[id]) {
            case (nil, .some): changes[id] = [.added]
            case (.some, nil): changes[id] = [.deleted]
            case (.some(let a), .some(let b)):
                var list: [Change] = []
                if a.title != b.title { list.append(.retitled) }
                if a.done != b.done { list.append(.toggled) }
                if !list.isEmpty { changes[id] = list }
            default: break
            }
        }
        return changes
    }

    /// Compares what a folder holds with what the model says it must, and files each difference
    /// under the summary's names.
    struct Tally {
        /// Ids a person (or the other clone) changed, added or deleted, and the app did not: a
        /// difference there is a lost save.
        var personal: Set<String> = []
        /// Which tool saved a change of an id, when the reports should say it.
        var savedBy: [String: String] = [:]
        /// Ids deleted at some point: one that is back is resurrected.
        var deleted: Set<String> = []
        /// Each case, with the id (or title) it is about.
        typealias Cases = [(id: String, text: String)]
        var lostSaves: Cases = []
        var lostEntities: Cases = []
        var resurrected: Cases = []
        var divergence: Cases = []

        /// How many ids the cases are about (a todo lost once and reported at every later check
        /// counts once).
        func count(_ cases: Cases) -> Int { Set(cases.map(\.id)).count }

        /// The first few cases, for a report.
        func first(_ cases: Cases, _ number: Int = 5) -> String {
            cases.prefix(number).map(\.text).joined(separator: "; ")
        }

        /// Records every difference between `actual` and `expected` (`context` names the phase).
        mutating func check(_ actual: State, expected: State, _ context: String) {
            for (id, item) in expected.sorted(by: { $0.key < $1.key }) {
                guard let found = actual[id] else {
                    if personal.contains(id) {
                        lostSaves.append((id, "\(context): \(id) \(item) (added by a save\(by(id))) is missing"))
                    } else {
                        lostEntities.append((id, "\(context): \(id) \(item) is missing"))
                    }
                    continue
                }
                if found != item {
                    let who = personal.contains(id) ? "the save's" : "the app's"
                    lostSaves.append((id, "\(context): \(id) is \(found), \(who) change\(by(id)) made it \(item)"))
                }
            }
            for (id, item) in actual.sorted(by: { $0.key < $1.key }) where expected[id] == nil {
                if deleted.contains(id) {
                    resurrected.append((id, "\(context): \(id) \(item) was deleted\(personal.contains(id) ? " by a save" : "") and is back"))
                } else {
                    resurrected.append((id, "\(context): \(id) \(item) is in no version the model knows"))
                }
            }
        }

        private func by(_ id: String) -> String { savedBy[id].map { " by \($0)" } ?? "" }

        /// Two folders that synced must hold the same.
        mutating func agree(_ one: State, _ other: State, _ context: String) {
            guard one != other else { return }
            let ids = Set(one.keys).union(other.keys).filter { one[$0] != other[$0] }.sorted()
            divergence.append(
                (
                    context,
                    "\(context): \(ids.count) todos differ, e.g. "
                        + ids.prefix(3).map {
                            "\($0): \(one[$0]?.description ?? "none") vs \(other[$0]?.description ?? "none")"
                        }.joined(separator: "; ")
                ))
        }
    }
}

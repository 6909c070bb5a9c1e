/// Which version of a data file a file's content is, and what it descends from (FORMAT.md,
/// "Revisions"): the top-level members `"revision": "<writer>:<number>:<hash>"` and
/// `"ancestors": {"<writer>": <number>}`.
///
/// Revisions of one file by one writer form a line (a writer writes its files one at a time, under
/// the writers' lock), so a revision is named by its writer and number, and what a content descends
/// from by one number per writer: its ``vector``. `hash` is the content's own hash (the canonical
/// bytes without these two members), so that a reader tells an unedited revision from a save made
/// from it.
struct Revision: Equatable, Sendable {
    static let member = "revision"
    static let ancestorsMember = "ancestors"

    var writer: String
    var number: UInt64
    var hash: ContentHash
    /// Other writers' newest revisions this content includes.
    var ancestors: [String: UInt64] = [:]

    /// Every writer's newest revision this content includes, its own among them.
    var vector: [String: UInt64] {
        var vector = ancestors
        vector[writer] = max(vector[writer] ?? 0, number)
        return vector
    }

    /// The member's text.
    var text: String { "\(writer):\(number):\(hash)" }

    /// Parses `<writer>:<number>:<hash>` (the writer may hold colons: it is split from the right).
    init?(text: String, ancestors: [String: UInt64] = [:]) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count >= 3, let hash = ContentHash(hex: parts[parts.count - 1]),
            let number = UInt64(parts[parts.count - 2]), number > 0
        else { return nil }
        let writer = parts.dropLast(2).joined(separator: ":")
        guard WriterID.isValid(writer) else { return nil }
        self.init(writer: writer, number: number, hash: hash, ancestors: ancestors)
    }

    init(writer: String, number: UInt64, hash: ContentHash, ancestors: [String: UInt64] = [:]) {
        self.writer = writer
        self.number = number
        self.hash = hash
        self.ancestors = ancestors.filter { $0.key != writer }
    }

    /// The key under which content that descends from a person's save names it in `ancestors`:
    /// `~` and the save's ``ContentHash`` (FORMAT.md, "Revisions"). A save has no writer and no
    /// number of its own; every copy that reads the same bytes (a conflict resolved and pulled, a
    /// hand edit copied by rsync) knows it by this name, so a revision made from it, in any copy,
    /// tells the others that it is their common base.
    static func editKey(_ save: ContentHash) -> String { "~\(save)" }

    /// The save an `ancestors` key names, or nil for a writer's key.
    static func save(named key: String) -> ContentHash? {
        guard key.utf8.first == UInt8(ascii: "~") else { return nil }
        return ContentHash(hex: key.dropFirst())
    }

    /// The value of a save's entry in `ancestors`: the second (since 1970) a copy first read it,
    /// by which it is dropped once older than the history keeps versions.
    static var currentSecond: UInt64 { UInt64(max(1, FileIdentity.now / 1_000_000_000)) }

    /// `vector` without the saves first read more than `retention` ago (copies keep the versions of
    /// a file about that long: pass the longer of this copy's retention and the default).
    static func droppingSaves(_ vector: [String: UInt64], olderThan retention: Duration, now seconds: UInt64) -> [String: UInt64] {
        let horizon = UInt64(max(0, retention.components.seconds))
        return vector.filter { key, read in save(named: key) == nil || read &+ horizon >= seconds }
    }

    /// Whether content that names `vector` descends from (or is) revision `number` of `writer`.
    static func includes(_ vector: [String: UInt64], writer: String, number: UInt64) -> Bool {
        (vector[writer] ?? 0) >= number
    }

    /// The newest of each writer's revisions in either vector.
    static func join(_ first: [String: UInt64], _ second: [String: UInt64]) -> [String: UInt64] {
        first.merging(second) { max($0, $1) }
    }

    /// Takes the two members out of a file's top-level members: the revision when it is well
    /// formed (nil otherwise, and for a file without one: an unknown base).
    static func take(from members: inout [String: JSONValue]) -> Revision? {
        let text = members.removeValue(forKey: member)
        let ancestorsValue = members.removeValue(forKey: ancestorsMember)
        guard case .string(let text)? = text else { return nil }
        var ancestors: [String: UInt64] = [:]
        if case .object(let pairs)? = ancestorsValue {
            for (writer, value) in pairs {
                guard case .number(let digits) = value, let number = UInt64(digits), WriterID.isValid(writer) else { return nil }
                ancestors[writer] = number
            }
        } else if ancestorsValue != nil {
            return nil
        }
        return Revision(text: text, ancestors: ancestors)
    }

    /// Puts the two members into a file's top-level members.
    func put(into members: inout [String: JSONValue]) {
        members[Self.member] = .string(text)
        if !ancestors.isEmpty {
            members[Self.ancestorsMember] = .object(ancestors.mapValues { .number(String($0)) })
        }
    }
}

extension PartitionFile.Contents {
    /// This content, read from a person's save whose bytes hash to `save`, naming that save among
    /// its ancestors (``Revision/editKey(_:)``), so that what is made from it tells every copy
    /// holding the same bytes (a conflict resolved and pulled, a hand edit copied) that they are
    /// its base. Content without a revision (an unknown base) and unedited revisions are returned
    /// as they are.
    func namingSave(_ save: ContentHash) -> PartitionFile.Contents {
        guard var revision, !isUneditedRevision else { return self }
        let key = Revision.editKey(save)
        revision.ancestors[key] = max(revision.ancestors[key] ?? 0, Revision.currentSecond)
        var named = self
        named.revision = revision
        return named
    }
}

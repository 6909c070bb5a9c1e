/// One partition file as the store holds it in memory.
///
/// `base` is the file's content as last read (or written) by this process, and `identity` says
/// which version of the file that was. `entities` is the committed state: `base` plus every record
/// of the journal's current generation that touches this partition. The two share storage until a
/// transaction changes something (copy-on-write).
final class Partition {
    let address: PartitionAddress
    private(set) var identity: FileIdentity?
    private(set) var base: [String: JSONValue] = [:]
    private(set) var baseVersions: [String: String] = [:]
    private(set) var extra: [String: JSONValue] = [:]
    /// The revision of the content `base` is (FORMAT.md, "Revisions"): the file's, or, when
    /// `holdsMerge`, the merge's; nil for a file without one.
    private(set) var revision: Revision?
    private(set) var entities: [String: JSONValue] = [:]
    /// The server's version of each entity it has seen (set by the sync engine).
    private(set) var versions: [String: String] = [:]
    /// Decoded Swift values of `entities`, for one entity type at a time.
    private(set) var decoded: (any DecodedCache)?
    /// Set while the file on disk cannot be read (broken by a hand edit); the last good state is
    /// served meanwhile and the file is never overwritten.
    private(set) var unreadable: FolioError?
    private(set) var unreadableIdentity: FileIdentity?
    /// Set while the file has never parsed in this process: `entities` holds only the journal's
    /// changes (a placeholder for writes), so reads refuse it instead of serving that.
    private(set) var neverRead = false
    /// The hash of the file's bytes as this process last read or wrote them: a checkpoint replaces
    /// the file only if it still holds these (``AtomicFile/swapIn(_:ifStill:)``).
    private(set) var fileHash: ContentHash?
    /// Set when `base` is not the file but its merge with what Folio wrote since (the file was
    /// saved from an older version): the next checkpoint writes the merge.
    private(set) var holdsMerge = false
    /// Set when that merge is Folio's newest version of the file, nothing taken from the file: the
    /// file is an older revision Folio's state includes (a checkpoint replacing it while it was
    /// read, one cut short, an older copy put back). What it changes came from Folio's writes.
    private(set) var holdsNewerVersion = false
    /// Set when the file is a person's save that a journal record adopted: the next checkpoint
    /// makes it Folio's version (StoreEngine+HandEdits.swift), so no later read adopts it again.
    private(set) var adoptedSave = false
    /// The file's bytes when they are not among the versions Folio keeps (a person saved them):
    /// kept before Folio next replaces the file, so that a later save made from them is merged
    /// against them.
    private(set) var unkeptFile: [UInt8]?
    /// The estimated bytes `entities` occupies in memory (see ``estimatedBytes``).
    private(set) var entityBytes = 0

    init(address: PartitionAddress, identity: FileIdentity?, contents: PartitionFile.Contents) {
        self.address = address
        load(contents, identity: identity)
    }

    static func empty(_ address: PartitionAddress) -> Partition {
        Partition(address: address, identity: nil, contents: PartitionFile.Contents(entities: [:], extra: [:]))
    }

    /// The file's content, as `base` and as read.
    func load(_ contents: PartitionFile.Contents, identity: FileIdentity?) {
        base = contents.entities
        baseVersions = contents.versions
        extra = contents.extra
        revision = contents.revision
        self.identity = identity
        entities = base
        versions = baseVersions
        decoded = nil
        entityBytes = Self.estimatedSize(of: entities)
        adoptedSave = false
    }

    func apply(_ change: JournalRecord.Change) {
        entityBytes +=
            (change.entity.map { Self.estimatedSize(of: $0, id: change.id) } ?? 0)
            - (entities[change.id].map { Self.estimatedSize(of: $0, id: change.id) } ?? 0)
        entities[change.id] = change.entity
        decoded?.forget(change.id)
        if change.forgetsVersion {
            versions[change.id] = nil
        } else if change.entity == nil {
            versions[change.id] = change.version
        } else if let version = change.version {
            versions[change.id] = version
        }
    }

    func resetToBase() {
        if entities != base || versions != baseVersions {
            entities = base
            versions = baseVersions
            decoded = nil
            entityBytes = Self.estimatedSize(of: entities)
        }
    }

    /// An estimate of the memory this partition holds: its JSON values, their decoded Swift values
    /// (counted as much again), and a fixed overhead. What ``PartitionCache`` budgets.
    var estimatedBytes: Int {
        let decodedBytes = entities.isEmpty ? 0 : entityBytes * min(decoded?.count ?? 0, entities.count) / entities.count
        return Self.overhead + entityBytes + decodedBytes
    }

    static let overhead = 512

    static func estimatedSize(of entities: [String: JSONValue]) -> Int {
        entities.reduce(0) { $0 + estimatedSize(of: $1.value, id: $1.key) }
    }

    static func estimatedSize(of entity: JSONValue, id: String) -> Int {
        48 + id.utf8.count + estimatedSize(of: entity)
    }

    /// A rough size of a JSON value in memory: enum payloads, strings and dictionary entries.
    static func estimatedSize(of value: JSONValue) -> Int {
        switch value {
        case .null, .bool: return 16
        case .number(let text), .string(let text): return 32 + text.utf8.count
        case .array(let elements): return elements.reduce(48) { $0 + estimatedSize(of: $1) }
        case .object(let members): return members.reduce(64) { $0 + 48 + $1.key.utf8.count + estimatedSize(of: $1.value) }
        }
    }

    /// Whether the committed state differs from the file.
    var isDirty: Bool { entities != base || versions != baseVersions || holdsMerge }

    /// What the file must hold.
    var contents: PartitionFile.Contents {
        PartitionFile.Contents(entities: entities, versions: versions, extra: extra, revision: revision)
    }

    /// After the file was written with `contents` (or removed: `identity` nil), as `revision`
    /// and with these bytes (nil: none).
    func markWritten(identity: FileIdentity?, revision: Revision?, fileHash: ContentHash?) {
        base = entities
        baseVersions = versions
        self.identity = identity
        self.revision = revision
        self.fileHash = fileHash
        holdsMerge = false
        holdsNewerVersion = false
        adoptedSave = false
        unkeptFile = nil
    }

    /// After the file was read: the hash of its bytes, whether `base` is their merge with what
    /// Folio wrote since (``holdsMerge``; Folio's newer version alone: ``holdsNewerVersion``),
    /// and the bytes when they are not among the versions Folio keeps (``unkeptFile``).
    func noteRead(fileHash: ContentHash?, holdsMerge: Bool, newerVersion: Bool = false, unkeptFile: [UInt8]?) {
        self.fileHash = fileHash
        self.holdsMerge = holdsMerge
        self.holdsNewerVersion = holdsMerge && newerVersion
        self.unkeptFile = unkeptFile
    }

    /// The file on disk cannot be read (its identity then): the partition serves its last good
    /// state, and the file is never overwritten. `neverRead`: there is no good state (a
    /// placeholder holding only the journal's changes, which reads refuse).
    func markUnreadable(_ error: FolioError, identity: FileIdentity?, neverRead: Bool = false) {
        unreadable = error
        unreadableIdentity = identity
        if neverRead { self.neverRead = true }
    }

    /// The file read again: the partition serves it.
    func markReadable() {
        unreadable = nil
        unreadableIdentity = nil
        neverRead = false
    }

    /// A journal record adopted the file, a person's save: the next checkpoint keeps it as
    /// Folio's version (``markSaveKept()``).
    func markAdoptedSave() { adoptedSave = true }
    /// The adopted save is kept as Folio's version.
    func markSaveKept() { adoptedSave = false }

    /// The typed values of all entities that decode, in id order, decoding only what is not
    /// cached yet. An entity that does not decode is skipped (its error is cached in `decoded`
    /// in its place, and handed to `undecodable` once), so it never hides its neighbours.
    func values<E: Entity>(_ type: E.Type, coder: EntityCoder, undecodable: (FolioError) -> Void = { _ in }) -> [E] {
        let cache = decodedCache(E.self)
        if cache.count < entities.count {
            let missing = cache.count == 0 ? entities : entities.filter { !cache.holds($0.key) }
            var (values, failures) = coder.decodeEach(E.self, from: missing, path: address.path)
            for id in values.keys {
                if let problem = Self.keyMismatch(id: id, in: missing[id]!, path: address.path) {
                    values[id] = nil
                    failures[id] = problem
                }
            }
            if cache.values.isEmpty {
                cache.values = values
            } else {
                cache.values.merge(values) { _, new in new }
            }
            for id in failures.keys.sorted(by: { $0.precedesInKeyOrder($1) }) {
                cache.failures[id] = failures[id]!
                undecodable(failures[id]!)
            }
        }
        var result: [E] = []
        result.reserveCapacity(entities.count)
        for id in entities.keys.sorted(by: { $0.precedesInKeyOrder($1) }) {
            if let value = cache.values[id] { result.append(value) }
        }
        return result
    }

    /// Decoded values fetched with the file (StoreEngine+Scan.swift), for entities not decoded yet.
    func prefill<E: Entity>(_ values: [String: E]) {
        let cache = decodedCache(E.self)
        for (id, value) in values where !cache.holds(id) { cache.values[id] = value }
    }

    func value<E: Entity>(_ type: E.Type, id: String, coder: EntityCoder) throws(FolioError) -> E? {
        guard let json = entities[id] else { return nil }
        let cache = decoded as? DecodedEntities<E>
        if let value = cache?.values[id] { return value }
        if let problem = Self.keyMismatch(id: id, in: json, path: address.path) { throw problem }
        let value = try coder.decode(E.self, from: json, id: id, path: address.path)
        if decoded == nil || cache != nil { decodedCache(E.self).values[id] = value }
        return value
    }

    /// Whether `id` was found not to decode as the type last decoded.
    func failedToDecode(_ id: String) -> Bool { decoded?.failure(id) != nil }

    /// The cache of values decoded as `E`, replacing one of another type.
    private func decodedCache<E: Entity>(_ type: E.Type) -> DecodedEntities<E> {
        if let cache = decoded as? DecodedEntities<E> { return cache }
        let cache = DecodedEntities<E>()
        decoded = cache
        return cache
    }

    /// The error for an entity whose own `id` field (a string or number) is not the key it is
    /// stored under, as `folio verify` reports it; nil when they agree or it has no such field.
    /// Reads skip such an entity (as one that does not decode) instead of serving it under a
    /// key its value contradicts.
    static func keyMismatch(id: String, in json: JSONValue, path: String) -> FolioError? {
        let ownID: String
        switch json["id"] {
        case .string(let text)?, .number(let text)?: ownID = text
        default: return nil
        }
        guard ownID != id else { return nil }
        var error = FolioError(
            .decodingFailed, "entity stored under \"\(id)\" says its id is \"\(ownID)\": an entity is stored under its own id; rename the key or fix the field",
            path: path, entityID: id)
        error.fieldPath = ["id"]
        return error
    }
}

/// The decoded values of a partition's entities as one Swift type, whatever that type is.
protocol DecodedCache: AnyObject {
    /// How many entities it answers for (decoded or failed).
    var count: Int { get }
    /// Forgets what it knows of `id` (its JSON changed).
    func forget(_ id: String)
    /// Why `id` does not decode, if it was found not to.
    func failure(_ id: String) -> FolioError?
}

/// The values of a partition's entities decoded as `E`, and why the others do not decode: typed,
/// so reading them back needs no cast per entity.
final class DecodedEntities<E>: DecodedCache {
    var values: [String: E] = [:]
    var failures: [String: FolioError] = [:]

    var count: Int { values.count + failures.count }

    func holds(_ id: String) -> Bool { values[id] != nil || failures[id] != nil }

    func forget(_ id: String) {
        values[id] = nil
        failures[id] = nil
    }

    func failure(_ id: String) -> FolioError? { failures[id] }
}

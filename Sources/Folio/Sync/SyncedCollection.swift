/// A collection the sync engine knows the Swift type of, type-erased: how to check the server's
/// JSON against the type, where it goes, and how its conflicts are settled.
struct SyncedCollection: Sendable {
    let collection: String
    let granularity: PartitionGranularity
    let mode: SyncMode
    let policy: ErasedPolicy
    /// Registers the type with the store (so writes and reads know its partitioning).
    let register: @Sendable (Transaction) throws(FolioError) -> Void
    /// Checks that the JSON decodes as the type and has this id; returns its partition key.
    let admit: @Sendable (JSONValue, String, EntityCoder) throws(FolioError) -> PartitionKey

    /// Where the server's `entity` goes: checked against the type, in the partition its fields name.
    func address(of entity: JSONValue, id: String, coder: EntityCoder) throws(FolioError) -> PartitionAddress {
        PartitionAddress(collection: collection, granularity: granularity, key: try admit(entity, id, coder))
    }

    enum ErasedPolicy: Sendable {
        case serverWins, clientWins, threeWayMerge, keepBoth
        case custom(@Sendable (ErasedConflict, EntityCoder) throws -> ErasedResolution)
    }

    struct ErasedConflict {
        var base: JSONValue?
        var local: JSONValue?
        var server: JSONValue?
        var serverVersion: String?
        var id: String
    }

    enum ErasedResolution {
        case useServer, send(JSONValue), delete, keepBoth
    }

    init<E: Entity>(_ type: E.Type, policy: ConflictPolicy<E>) {
        collection = E.collection
        granularity = E.partitioning.granularity
        mode = E.syncMode
        register = { tx throws(FolioError) in try tx.register(E.self) }
        admit = { json, id, coder throws(FolioError) in
            let entity = try coder.decode(E.self, from: json, id: id, path: "the server's \(E.collection)/\(id)")
            guard entity.id.storageKey == id else {
                throw FolioError(.badResponse, "the server's entity \"\(id)\" has the id \"\(entity.id.storageKey)\"", entityID: id)
            }
            do throws(FolioError) { return PartitionKey(text: try E.partitioning.key(entity)) } catch { throw error.withEntity(id) }
        }
        switch policy.kind {
        case .serverWins: self.policy = .serverWins
        case .clientWins: self.policy = .clientWins
        case .threeWayMerge: self.policy = .threeWayMerge
        case .keepBoth: self.policy = .keepBoth
        case .custom(let resolve):
            self.policy = .custom { conflict, coder in
                func typed(_ json: JSONValue?) throws -> E? {
                    try json.map { try coder.decode(E.self, from: $0, id: conflict.id, path: "a conflict over \(E.collection)/\(conflict.id)") }
                }
                let decision = try resolve(
                    Conflict(
                        base: try typed(conflict.base), local: try typed(conflict.local),
                        server: try typed(conflict.server), serverVersion: conflict.serverVersion))
                switch decision {
                case .useServer: return .useServer
                case .delete: return .delete
                case .keepBoth: return .keepBoth
                case .send(let entity):
                    guard entity.id.storageKey == conflict.id else {
                        throw FolioError(.invalidQuery, "a conflict resolver must return the same entity (id \(conflict.id))")
                    }
                    return .send(try coder.encode(entity))
                }
            }
        }
    }
}

internal import Foundation

/// Decoding a partition one entity at a time, so that one entity that no longer decodes (an old
/// shape, a hand edit) does not take its neighbours down with it.
extension EntityCoder {
    /// Why one stored entity does not decode as a Swift type.
    struct DecodingFailure: Error {
        /// The field path at fault inside the entity (`["mood"]`, `["tags", "0", "name"]`); empty
        /// when the entity as a whole is at fault.
        var field: [String]
        var message: String
    }

    /// Every entity that decodes, and why each other one does not: each entity decoded on its own,
    /// straight from its JSON where the direct decoder can vouch for it.
    func decodeEach<E: Entity>(_ type: E.Type, from entities: [String: JSONValue], path: String)
        -> (values: [String: E], failures: [String: FolioError])
    {
        var values = [String: E](minimumCapacity: entities.count)
        var failures: [String: FolioError] = [:]
        for (id, json) in entities {
            switch decodeOne(E.self, from: json) {
            case .success(let value): values[id] = value
            case .failure(let failure): failures[id] = Self.error(failure, type: E.self, id: id, path: path)
            }
        }
        return (values, failures)
    }

    /// Decodes one entity, keeping the field path of a failure.
    func decodeOne<E: Entity>(_ type: E.Type, from json: JSONValue) -> Result<E, DecodingFailure> {
        do {
            return .success(try decodeValue(E.self, from: json))
        } catch {
            // A number the field cannot hold fails without a coding path: find the number.
            if let culprit = numberCulprit(E.self, in: json, error: error) {
                return .failure(DecodingFailure(field: culprit.path, message: culprit.message))
            }
            return .failure(DecodingFailure(field: Self.fieldPath(of: error), message: Self.describe(error)))
        }
    }

    /// The keys leading to the value a decoding error is about (for a missing field, the field).
    static func fieldPath(of error: any Error) -> [String] {
        guard let error = error as? DecodingError else { return [] }
        func keys(_ context: DecodingError.Context) -> [String] {
            context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }
        }
        switch error {
        case .keyNotFound(let key, let context): return keys(context) + [key.stringValue]
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context): return keys(context)
        @unknown default: return []
        }
    }

    /// The error for an entity that does not decode; its message names the field.
    static func error<E>(_ failure: DecodingFailure, type: E.Type, id: String, path: String) -> FolioError {
        FolioError(.decodingFailed, "entity \"\(id)\" does not decode as \(E.self): \(failure.message)", path: path, entityID: id)
    }
}

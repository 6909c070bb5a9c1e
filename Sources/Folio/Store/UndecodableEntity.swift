/// A stored entity that does not decode as the Swift type it was read as: an old shape the app's
/// models no longer match (a field added without a default, renamed, or of another type), or a
/// hand edit.
///
/// Reads skip such an entity and serve the rest of its partition; ``Store/undecodableEntities(_:in:)``
/// lists them, and each is logged once when a read first meets it. Folio never drops its fields:
/// an upsert over it keeps every stored field the new value does not set. Fix it with a migration
/// (docs/ChangingModels.md) or by hand.
public struct UndecodableEntity: Sendable, Equatable, CustomStringConvertible {
    /// The entity's collection.
    public let collection: String
    /// The entity's id.
    public let id: String
    /// Its partition file, relative to the store's folder.
    public let path: String
    /// The 1-based line of the field at fault (or of the entity, for a field that is missing) in
    /// ``path``; nil while the entity exists only in the journal, not yet in the file.
    public let line: Int?
    /// The 1-based column (in bytes) that goes with ``line``.
    public let column: Int?
    /// The field at fault, as a dotted path inside the entity (`mood`, `tags.0.name`); nil when
    /// the entity as a whole is at fault.
    public let field: String?
    /// What is wrong, e.g. `expected Int at mood: …` or `missing field "weather"`.
    public let message: String

    /// The same, as the error a read of this entity alone (``Store/get(_:id:)``) throws.
    public var error: FolioError {
        var error = FolioError(.decodingFailed, "entity \"\(id)\" does not decode: \(message)", path: path, line: line, column: column, entityID: id)
        error.fieldPath = fieldPath
        return error
    }

    /// The keys from the entity down to the field at fault.
    let fieldPath: [String]

    /// `path:line:column: entity "id" does not decode: …`, as a person reads it.
    public var description: String { error.description }
}

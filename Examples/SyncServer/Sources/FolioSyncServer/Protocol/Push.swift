/// One push (`PUT` or `DELETE` of an entity), checked and ready to apply.
struct Push: Sendable {
    enum Change: Sendable {
        case upsertTodo(TodoDocument)
        case upsertTag(TagDocument)
        case delete
    }

    var kind: CollectionKind
    var id: String
    var change: Change
    /// `PUT` or `DELETE`.
    var method: String
    /// The `Idempotency-Key`, as sent and as an id (see ``IdempotencyRecord/escape(_:)``).
    var key: (text: String, id: String)?
    var ifMatch: EntityTagList?
    var ifNoneMatch: EntityTagList?
    /// The `PUT` body as a JSON value (nil for a `DELETE`): what a repeated key is compared on.
    var body: JSONValue?

    /// What the idempotency memory compares a repeated key against: `todos/<id>`.
    var target: String { kind.rawValue + "/" + id }
}

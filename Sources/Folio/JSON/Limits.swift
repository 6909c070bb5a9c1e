/// The limits Folio enforces, in one place, so that what a writer accepts a reader can always read
/// back: every limit is checked where data enters (a write, a file, a server answer) with the
/// same numbers as where it is read (the JSON parser, the journal).
enum Limits {
    /// The deepest nesting of objects and arrays a document may have (the parser refuses more,
    /// so hostile input cannot exhaust the stack).
    static let documentDepth = JSONParser.maximumDepth
    /// The most levels any Folio document wraps an entity in: a journal record that enqueues a
    /// command holds the entity at `{"outbox": [{"command": {"body": …}}]}`, 4 levels; a partition
    /// file at `{"entities": {"<id>": …}}`, 2. One level to spare.
    static let wrapperDepth = 5
    /// The deepest nesting an entity may have: with any wrapper, its document stays within
    /// ``documentDepth``. A write of a deeper entity fails, and a deeper entity in a file is
    /// reported, as the entity's own problem.
    static let entityDepth = documentDepth - wrapperDepth
    /// The largest payload of a journal record: the compact JSON of one transaction.
    static let transactionBytes = Journal.maximumPayload

    /// Throws when `entity` nests deeper than ``entityDepth``.
    static func checkEntity(_ entity: JSONValue, id: String, code: FolioError.Code) throws(FolioError) {
        let depth = entity.depth
        guard depth <= entityDepth else {
            throw FolioError(code, "entity \"\(id)\" nests \(depth) levels deep; Folio's limit is \(entityDepth)", entityID: id)
        }
    }

    /// Throws when a journal record's payload is larger than a reader accepts.
    static func checkTransaction(payloadBytes: Int) throws(FolioError) {
        guard payloadBytes <= transactionBytes else {
            throw FolioError(
                .limitExceeded,
                "the transaction is \(payloadBytes) bytes of JSON; Folio's limit for one transaction is \(transactionBytes) bytes (\(transactionBytes >> 20) MiB): split it into several",
                path: StoreLayout.journal)
        }
    }
}

extension JSONValue {
    /// How deeply objects and arrays nest: 0 for a scalar, 1 for `{}` or `[1]`, as the parser counts.
    var depth: Int {
        switch self {
        case .object(let members): return 1 + (members.values.lazy.map(\.depth).max() ?? 0)
        case .array(let items): return 1 + (items.lazy.map(\.depth).max() ?? 0)
        case .null, .bool, .number, .string: return 0
        }
    }
}

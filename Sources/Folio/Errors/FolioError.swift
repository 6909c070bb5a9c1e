/// The one error type Folio throws.
///
/// Match on ``code`` to decide what to do, and show ``description`` to a person: it says what went
/// wrong and where (the file relative to the store, the line and column of a JSON error, the
/// entity id, the operating system's reason).
///
/// ```swift
/// do {
///     let todos = try await store.fetch(Query<Todo>(.day("2026-11-22")))
/// } catch let error as FolioError where error.code == .corruptFile {
///     showRepairHint(file: error.path, line: error.line)
/// }
/// ```
///
/// New codes may be added in later versions, so a `switch` over ``Code`` needs a `default`.
public struct FolioError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure this is. Codes are stable; new ones may be added.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The code's stable name, e.g. `"corruptFile"`.
        public let rawValue: String
        /// A code from its name. Compare with the static codes (``corruptFile``, …) rather than
        /// making your own.
        /// - Parameter rawValue: The code's name.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The code's name, as ``rawValue``.
        public var description: String { rawValue }

        /// A data file is not valid JSON, or does not have the shape FORMAT.md specifies.
        /// ``FolioError/path``, ``FolioError/line`` and ``FolioError/column`` say where. Folio never
        /// overwrites such a file; fix it by hand (or restore it) and the store picks it up.
        public static let corruptFile = Code(rawValue: "corruptFile")
        /// A stored entity does not decode as the Swift type asked for (a field is missing or has
        /// the wrong type). ``FolioError/path`` and ``FolioError/entityID`` say which.
        public static let decodingFailed = Code(rawValue: "decodingFailed")
        /// An entity could not be encoded to JSON (for example a non-finite Double).
        public static let encodingFailed = Code(rawValue: "encodingFailed")
        /// An id, collection name or partition key that Folio refuses, because it could address a
        /// path outside the store or is not in the required form.
        public static let invalidName = Code(rawValue: "invalidName")
        /// A system call failed (``FolioError/systemError`` holds errno). Nothing was half-written:
        /// the transaction that met it did not happen.
        public static let io = Code(rawValue: "io")
        /// The disk is full. Nothing was half-written; free space and try again.
        public static let diskFull = Code(rawValue: "diskFull")
        /// The folder is not a Folio store, or was written by a newer version of Folio.
        public static let unsupportedFormat = Code(rawValue: "unsupportedFormat")
        /// Two entity types declared the same collection name with different partitionings.
        public static let collectionMismatch = Code(rawValue: "collectionMismatch")
        /// The store was closed, or a failed flush left its state unknown: open it again.
        public static let storeClosed = Code(rawValue: "storeClosed")
        /// The store was opened read-only (``Store/Configuration/readOnly``, or automatically because
        /// its folder cannot be written): reads work, writes and checkpoints throw this.
        public static let readOnly = Code(rawValue: "readOnly")
        /// Data is over one of Folio's limits (a transaction's size; FORMAT.md, "Limits"): nothing
        /// was written. An entity nested too deeply is ``encodingFailed`` instead.
        public static let limitExceeded = Code(rawValue: "limitExceeded")
        /// The journal holds a record Folio cannot apply (a damaged or foreign journal).
        public static let corruptJournal = Code(rawValue: "corruptJournal")
        /// A query asked for something its entity type does not support (a day range on an
        /// unpartitioned collection, for example).
        public static let invalidQuery = Code(rawValue: "invalidQuery")
        /// Evaluating a query's predicate threw.
        public static let predicateFailed = Code(rawValue: "predicateFailed")
        /// The server could not be reached, or the request failed on the way (no network, a
        /// dropped connection, a timeout). Sync retries these by itself.
        public static let network = Code(rawValue: "network")
        /// The server's answer cannot be used: an unexpected status, a body that is not the JSON
        /// the protocol specifies (the message names the field), or one over the size limit.
        public static let badResponse = Code(rawValue: "badResponse")
        /// The server refused the credentials, even fresh ones from the auth provider.
        public static let unauthorized = Code(rawValue: "unauthorized")
        /// The store was migrated by a newer version of the app (its `folio.json` records
        /// migrations the ``Migrator`` does not have). Folio neither opens nor rewrites it.
        public static let newerSchema = Code(rawValue: "newerSchema")
        /// A migration step failed (the message names the entity); nothing was changed.
        public static let migrationFailed = Code(rawValue: "migrationFailed")
        /// The folder is a copy of a store taken while Folio was writing it (rsync, cp or a sync
        /// tool copying a live folder) and may hold part of a transaction: the message names a
        /// file whose version does not belong with the copied journal. Folio neither opens nor
        /// changes it; copy again, or use ``Store/snapshot(to:progress:)``.
        public static let inconsistentCopy = Code(rawValue: "inconsistentCopy")
    }

    /// What kind of failure this is.
    public let code: Code
    /// A sentence describing the failure.
    public let message: String
    /// The file concerned, relative to the store's folder (e.g. `todos/2026-11/2026-11-22.json`).
    public let path: String?
    /// The 1-based line in ``path`` where a JSON error was found.
    public let line: Int?
    /// The 1-based column (in bytes) in ``path`` where a JSON error was found.
    public let column: Int?
    /// The entity concerned, when there is one.
    public let entityID: String?
    /// The operating system's error number, for ``Code/io`` and ``Code/diskFull``.
    public let systemError: Int32?
    /// For ``Code/decodingFailed``: the member keys from the entity down to the field at fault,
    /// when known (the message names it too); used to find its line and column in the file.
    var fieldPath: [String]? = nil

    init(
        _ code: Code, _ message: String, path: String? = nil, line: Int? = nil, column: Int? = nil,
        entityID: String? = nil, systemError: Int32? = nil
    ) {
        self.code = code
        self.message = message
        self.path = path
        self.line = line
        self.column = column
        self.entityID = entityID
        self.systemError = systemError
    }

    /// What went wrong and where, printable as it is: control characters and direction overrides
    /// from ids, file names or a server's answer are shown escaped (`\u{1B}`).
    public var description: String {
        var location = ""
        if let path {
            location = path
            if let line { location += ":\(line)" + (column.map { ":\($0)" } ?? "") }
            location += ": "
        }
        var text = "\(location)\(message)"
        if let entityID, !message.contains(entityID) { text += " (entity \"\(entityID)\")" }
        // Ids, paths and messages carry outside text: print only safe characters.
        return SafeText.escaped(text)
    }

    /// The same error, located in `path` (used when a lower layer did not know the file).
    func located(in path: String) -> FolioError {
        var error = FolioError(
            code, message, path: self.path ?? path, line: line, column: column,
            entityID: entityID, systemError: systemError)
        error.fieldPath = fieldPath
        return error
    }
}

extension FolioError.Code {
    /// Lets a `catch` clause or `switch` match an error by code:
    /// `catch FolioError.Code.corruptFile { … }`.
    public static func ~= (code: FolioError.Code, error: any Error) -> Bool {
        (error as? FolioError)?.code == code
    }
}

extension FolioError {
    static func system(_ operation: String, path: String, errno code: Int32) -> FolioError {
        FolioError(
            code == Platform.noSpace ? .diskFull : .io, "\(operation) failed: \(Platform.describe(code))", path: path, systemError: code)
    }
}

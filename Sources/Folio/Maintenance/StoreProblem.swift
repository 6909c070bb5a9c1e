/// Something `verify` found in a store's folder: what, where, and how bad.
///
/// ``description`` has the form compilers use, `path:line:column: error: message`, so an editor
/// or a terminal can jump to the place.
public struct StoreProblem: Sendable, Equatable, CustomStringConvertible {
    /// How bad a problem is.
    public enum Severity: String, Sendable, Comparable {
        /// Something is wrong with the store: data Folio cannot read, a broken rule of FORMAT.md.
        case error
        /// Something a person should look at, that does not break the store: a sync-tool conflict
        /// copy, a leftover temp file, a damaged file of advisory data.
        case warning
        /// Worth knowing, nothing to do: a torn journal tail after a crash, transactions waiting
        /// in the journal.
        case note

        /// Orders by importance: an error comes before a warning, a warning before a note.
        /// - Parameters:
        ///   - a: A severity.
        ///   - b: Another severity.
        /// - Returns: True if `a` is more serious than `b`.
        public static func < (a: Severity, b: Severity) -> Bool { a.rank < b.rank }
        private var rank: Int {
            switch self {
            case .error: return 0
            case .warning: return 1
            case .note: return 2
            }
        }
    }

    /// What kind of problem, for scripts and tests: stable strings such as `invalidJSON`,
    /// `duplicateID` or `conflictCopy` (the list is in docs/CLI.md; it may grow).
    public struct Kind: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The kind's stable name, e.g. `"invalidJSON"`.
        public let rawValue: String
        /// A kind from its name.
        /// - Parameter rawValue: The kind's name, as docs/CLI.md lists them.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The kind's name, as ``rawValue``.
        public var description: String { rawValue }

        /// A file that is not valid JSON.
        public static let invalidJSON = Kind(rawValue: "invalidJSON")
        /// Valid JSON without the shape FORMAT.md specifies for this file.
        public static let badShape = Kind(rawValue: "badShape")
        /// A collection name, partition key, entity id or file name that breaks the Names rules.
        public static let invalidName = Kind(rawValue: "invalidName")
        /// A partition file in the wrong place for its key (a day file in another month's folder).
        public static let wrongPartition = Kind(rawValue: "wrongPartition")
        /// An entity id held by two partition files of one collection.
        public static let duplicateID = Kind(rawValue: "duplicateID")
        /// The format marker `folio.json` is missing, unreadable or from a newer Folio.
        public static let marker = Kind(rawValue: "marker")
        /// The journal: a bad header, a record that cannot be applied, a torn tail, pending records.
        public static let journal = Kind(rawValue: "journal")
        /// The outbox's numbering: a file name, a sequence that disagrees with it, one number in two
        /// places, numbers the journal would hand out again, gaps.
        public static let outboxNumbering = Kind(rawValue: "outboxNumbering")
        /// A command file that is not a command, or a failed command without its reason.
        public static let outboxCommand = Kind(rawValue: "outboxCommand")
        /// A quarantined file (a command in `outbox/quarantine/`, a file in `.folio/quarantine/`).
        public static let quarantined = Kind(rawValue: "quarantined")
        /// A data file whose base Folio will not know (no `revision`, or a malformed one): read, it
        /// adds and updates entities but deletes none (FORMAT.md, "Revisions").
        public static let unknownBase = Kind(rawValue: "unknownBase")
        /// A file left by a sync tool after a conflict (Syncthing, Dropbox, iCloud "name 2.json").
        public static let conflictCopy = Kind(rawValue: "conflictCopy")
        /// A temp file: rsync's `.name.XXXXXX`, or one in `.folio/tmp/` left by a crash.
        public static let tempFile = Kind(rawValue: "tempFile")
        /// An editor's backup or swap file (`name.json~`, `.name.json.swp`, `#name.json#`).
        public static let editorFile = Kind(rawValue: "editorFile")
        /// A copy of a live store whose files and journal are from different instants (a file
        /// does not hold the version its journal needs): it may hold part of a transaction.
        public static let inconsistentCopy = Kind(rawValue: "inconsistentCopy")
        /// A file that is not part of the format; Folio ignores it.
        public static let strayFile = Kind(rawValue: "strayFile")
        /// Advisory or derived machinery (`attempts.json`, `sync.json`, `index/`) that is damaged.
        public static let machinery = Kind(rawValue: "machinery")
        /// A file that could not be read at all (permissions, I/O error).
        public static let unreadable = Kind(rawValue: "unreadable")
    }

    /// How bad it is.
    public let severity: Severity
    /// What kind of problem it is.
    public let kind: Kind
    /// The file, relative to the store's folder (`.` for the folder itself).
    public let path: String
    /// The 1-based line in ``path``, when known.
    public let line: Int?
    /// The 1-based column (in bytes) in ``path``, when known.
    public let column: Int?
    /// What is wrong and what to do about it, in a sentence or two.
    public let message: String

    /// Creates a problem.
    /// - Parameters:
    ///   - severity: How bad it is.
    ///   - kind: What kind of problem it is.
    ///   - path: The file, relative to the store's folder.
    ///   - line: The 1-based line, when known.
    ///   - column: The 1-based byte column, when known.
    ///   - message: What is wrong and what to do about it.
    public init(_ severity: Severity, _ kind: Kind, path: String, line: Int? = nil, column: Int? = nil, message: String) {
        self.severity = severity
        self.kind = kind
        self.path = path
        self.line = line
        self.column = line == nil ? nil : column
        self.message = message
    }

    /// `path:line:column: severity: message`, with the line and column left out when unknown.
    public var description: String {
        var location = path
        if let line {
            location += ":\(line)"
            if let column { location += ":\(column)" }
        }
        return SafeText.escaped("\(location): \(severity.rawValue): \(message)")
    }
}

internal import Foundation

/// A read-only pass over a store's folder, as FORMAT.md specifies it, without the app's Swift
/// types: it parses every file, checks every rule it can, and builds the committed state (the
/// files with the journal's records applied) that `status` summarises.
///
/// It never writes: no lock file, no journal, no temp file. It takes the readers' shared `flock`
/// when the lock file exists, so no checkpoint runs while it reads (a brief wait at most).
final class FolderScan {
    struct Collection {
        var granularity: PartitionGranularity
        /// The ids of each partition file, as the file holds them.
        var files: [PartitionKey: Set<String>] = [:]
        /// Where each key of each id is in its file, for pointing at duplicates.
        var positions: [PartitionKey: [String: JSONKeyLocator.Position]] = [:]
    }

    let fileSystem: FileSystem
    private(set) var problems: [StoreProblem] = []
    var storeID: String?
    var format: Int64?
    var isStore = false
    var collections: [String: Collection] = [:]
    var journal = JournalSummary()
    var records: [JournalRecord] = []
    var outbox = OutboxState()
    /// Where each command's file is (pending and failed commands).
    var commandFiles: [UInt64: String] = [:]
    var sentArchive: [(sequence: UInt64, modified: Int64)] = []
    var quarantinedFiles: [String] = []
    var attempts: [UInt64: CommandAttempts] = [:]
    var cursors: [String: String] = [:]
    var filesChecked = 0
    var entitiesChecked = 0
    /// Files `recover` should move to `.folio/quarantine/` (unreadable data, damaged advisory files).
    var unreadableFiles: [String] = []
    /// Derived files `recover` may delete (damaged indexes).
    var damagedDerivedFiles: [String] = []
    /// Called with a listed file's path just before ``readFile(_:skipped:)`` reads it: tests
    /// make the file go in between, a moment they cannot hit by timing alone.
    var beforeReadingListedFile: ((String) -> Void)?
    var leftoverTempFiles: [String] = []
    /// Who hears how many files were read, and the phase to report them as.
    private let progressHandler: ProgressHandler?
    private let progressPhase: FolioProgress.Phase
    private var progress: ProgressCounter?

    init(root: URL, progress: ProgressHandler? = nil, phase: FolioProgress.Phase = .checking) {
        fileSystem = FileSystem(root: root.standardizedFileURL.path)
        progressHandler = progress
        progressPhase = phase
    }

    func report(
        _ severity: StoreProblem.Severity, _ kind: StoreProblem.Kind, _ path: String,
        at position: JSONKeyLocator.Position? = nil, _ message: String
    ) {
        problems.append(StoreProblem(severity, kind, path: path, line: position?.line, column: position?.column, message: message))
    }

    /// Runs every check.
    /// - Throws: ``FolioError`` only when the folder itself cannot be read (missing, permissions).
    /// - Parameter lock: Whether to take the readers' shared lock (false when the caller holds the
    ///   exclusive one).
    func run(lock takeLock: Bool = true) async throws {
        guard try checkMarker() else { return }
        // Once the folder is known to be a store, its files are counted (a listing, far cheaper
        // than reading them), only when someone listens; the marker was read already, and files
        // that are not read (the lock, stray files) count as done at the end.
        if let progressHandler {
            let total: Int
            do {
                total = try ProgressCounter.countFiles(in: fileSystem)
            } catch {
                // A folder that cannot be listed is a problem this scan reports where it meets it;
                // the check goes on without a count (no progress shown).
                total = 0
            }
            progress = ProgressCounter(progressPhase, total: total, handler: progressHandler)
            for _ in 0..<filesChecked { progress?.advance() }
        }
        defer { progress?.finish() }
        let lock = takeLock ? await takeSharedLock() : nil
        defer { if let lock { _ = Platform.unlock(lock); _ = Platform.close(lock) } }
        try checkJournal()
        try checkRoot()
        try checkOutbox()
        try checkMachinery()
        try checkCopy()
        checkDuplicateIDs()
        // The committed outbox: the files with the journal's outbox changes applied.
        for change in records.flatMap(\.outbox) { outbox.apply(change) }
        problems.sort { ($0.path, $0.line ?? 0, $0.column ?? 0) < ($1.path, $1.line ?? 0, $1.column ?? 0) }
    }

    /// The readers' shared lock, taken without creating anything; nil when there is no lock file
    /// or a writer holds it for longer than a few seconds (the scan then goes on without it).
    func takeSharedLock() async -> Int32? {
        let fd = Platform.open(fileSystem.absolute(StoreLayout.lockFile), flags: Platform.readOnly)
        guard fd >= 0 else { return nil }
        for _ in 0..<500 {
            let code = Platform.lock(fd, exclusive: false, wait: false)
            if code == 0 { return fd }
            guard Platform.isWouldBlock(code) else { break }
            do { try await Task.sleep(for: .milliseconds(10)) } catch { break }
        }
        _ = Platform.close(fd)
        report(
            .note, .unreadable, StoreLayout.lockFile,
            "a writer held the lock for seconds; checked without it, so a checkpoint running meanwhile may show as a passing problem")
        return nil
    }

    /// Reads a file, reporting a failure to read it; nil when missing or unreadable.
    /// - Parameter skipped: For a file the scan just listed, what the scan leaves undone when it
    ///   is gone: such a file (replaced by delete and create, or deleted) is said to be skipped,
    ///   never taken for an empty one in silence. Nil for a file not listed (missing is no news).
    func readFile(_ path: String, skipped: String? = nil) -> [UInt8]? {
        if skipped != nil { beforeReadingListedFile?(path) }
        do {
            guard let (bytes, _) = try fileSystem.read(path) else {
                if let skipped {
                    report(.warning, .unreadable, path, "was listed but gone when it was read (being replaced?); \(skipped)")
                }
                return nil
            }
            filesChecked += 1
            progress?.advance()
            return bytes
        } catch {
            report(.error, .unreadable, path, "cannot be read: \(error.message)")
            return nil
        }
    }

    /// Parses a JSON file, reporting invalid JSON with its line and column.
    func parseJSON(_ path: String, _ bytes: [UInt8], severity: StoreProblem.Severity = .error, what: String) -> JSONValue? {
        do {
            return try JSONParser.parse(bytes)
        } catch {
            report(
                severity, .invalidJSON, path, at: .init(line: error.line, column: error.column),
                "invalid JSON: \(error.message); \(what)")
            return nil
        }
    }

    func list(_ path: String) -> [(name: String, isDirectory: Bool)] {
        do {
            return try fileSystem.list(path).sorted { $0.name < $1.name }
        } catch {
            report(.error, .unreadable, path, "cannot be listed: \(error.message)")
            return []
        }
    }

    // MARK: folio.json

    /// Whether the folder is a store (``isStore``): it has a `folio.json` that can be read,
    /// damaged or not (what is wrong with it is reported).
    /// - Throws: ``FolioError`` when the folder itself is missing or cannot be read.
    func checkMarker() throws -> Bool {
        guard let root = try fileSystem.identity(""), root.isDirectory else {
            throw FolioError(.io, "no such folder", path: fileSystem.root)
        }
        let path = StoreLayout.marker
        guard try fileSystem.identity(path) != nil else {
            let empty = try fileSystem.list("").isEmpty
            report(
                .error, .marker, ".",
                empty
                    ? "an empty folder, not a Folio store (no folio.json)"
                    : "not a Folio store: there is no folio.json (Folio will not open or write this folder)")
            return false
        }
        guard let bytes = readFile(path) else { return false }
        isStore = true
        guard let value = parseJSON(path, bytes, what: "Folio cannot open the store until it is fixed (it holds {\"format\": 1, \"store\": \"<UUID>\"})") else {
            return true
        }
        let locator = JSONKeyLocator(bytes)
        guard value.objectValue != nil else {
            report(.error, .marker, path, at: .init(line: 1, column: 1), "must be a JSON object {\"format\": 1, \"store\": \"<UUID>\"}")
            return true
        }
        if let format = value["format"]?.integerValue {
            self.format = format
            if format > StoreLayout.formatVersion {
                report(
                    .error, .marker, path, at: locator.position(of: ["format"]),
                    "format \(format) is newer than this Folio reads (\(StoreLayout.formatVersion)): use a newer folio tool")
            } else if format < 1 {
                report(.error, .marker, path, at: locator.position(of: ["format"]), "format must be a positive integer, not \(format)")
            }
        } else {
            report(
                .error, .marker, path, at: locator.position(of: ["format"]) ?? .init(line: 1, column: 1),
                "no integer \"format\": Folio cannot open the store")
        }
        if let store = value["store"]?.stringValue, !store.isEmpty, store.utf8.count <= 128 {
            storeID = store
            if UUID(uuidString: store) == nil || store != store.uppercased() {
                report(
                    .warning, .marker, path, at: locator.position(of: ["store"]),
                    "the store id \"\(store)\" is not an uppercase UUID, as FORMAT.md specifies (Folio accepts it)")
            }
        } else {
            report(
                .error, .marker, path, at: locator.position(of: ["store"]) ?? .init(line: 1, column: 1),
                "no \"store\" id string (1–128 bytes): Folio cannot open the store")
        }
        return true
    }

    // MARK: The root

    static func isCollectionName(_ name: String) -> Bool {
        do { try Names.validateCollection(name) } catch { return false }
        return true
    }

    private func checkRoot() throws {
        var partitionedFolders: Set<String> = []
        var unpartitionedFiles: Set<String> = []
        for entry in list("") {
            let name = entry.name
            if name == StoreLayout.marker || name == StoreLayout.machinery || name == OutboxBook.folder { continue }
            if entry.isDirectory {
                if name.hasSuffix(".json"), Self.isCollectionName(String(name.dropLast(5))) {
                    report(.error, .badShape, name, FileSystem.directoryInstead(of: name).message + "; the store cannot read this collection")
                    continue
                }
                do {
                    try Names.validateCollection(name)
                    partitionedFolders.insert(name)
                    checkCollectionFolder(name)
                } catch {
                    report(
                        name.hasPrefix(".") ? .note : .warning, .strayFile, name,
                        "a folder that is not a collection (\(error.message)): Folio ignores it")
                }
                continue
            }
            let stray = StrayFileProblem.classify(name)
            if stray.kind == .strayFile, name.hasSuffix(".json"), !name.hasPrefix(".") {
                let collection = String(name.dropLast(5))
                do {
                    try Names.validateCollection(collection)
                } catch {
                    report(.error, .invalidName, name, "Folio cannot read this file as a collection: \(error.message)")
                    continue
                }
                unpartitionedFiles.insert(collection)
                collections[collection] = Collection(granularity: .none)
                checkPartitionFile(name, collection: collection, key: .whole)
            } else {
                report(stray.severity, stray.kind, name, stray.message)
            }
        }
        for name in partitionedFolders.intersection(unpartitionedFiles).sorted() {
            report(
                .error, .wrongPartition, name + ".json",
                "collection \(name) has both an unpartitioned file and a partitioned folder \(name)/: Folio refuses to open it with either layout; merge them into one"
            )
        }
    }
}

/// What the journal holds, for `status`.
struct JournalSummary {
    var size: Int64 = 0
    /// The header, when it is a valid one; its first transaction is the checkpoint that last
    /// emptied the journal.
    var header: Journal.Header?
    var tornBytes: Int64 = 0
    /// Damage that is not a torn tail (see ``JournalDamage``).
    var damage: JournalDamage?
}

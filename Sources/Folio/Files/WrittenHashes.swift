/// The bytes each data file held when a checkpoint last wrote it, by hash, from `.folio/written`:
/// a file whose hash is its entry is Folio's own version of it, known without listing the file's
/// folder under `.folio/versions/` (one directory read per file, most of a cold scan's system
/// calls besides the reads themselves).
///
/// Only ever a shortcut to "yes, Folio's version": a file that differs from its entry (a person's
/// save, a checkpoint cut short, a version kept since without a line: an adopted save, a merge) is
/// checked against the kept versions as before. A file equal to its entry but older than a version
/// kept since holds what Folio last wrote to it, and the journal's records (an adoption) are
/// applied on top of it like on any file.
struct WrittenHashes: Sendable {
    private var byPath: [String: ContentHash] = [:]

    static let none = WrittenHashes()

    /// The last hash of each file in the log's bytes (a file whose last line says it was
    /// removed has none).
    init(log bytes: [UInt8]) {
        guard let contents = WrittenLog.parse(bytes) else { return }
        for (path, entries) in contents.history {
            if let hash = entries.last?.hash { byPath[path] = hash }
        }
    }

    private init() {}

    /// Whether `hash` is what a checkpoint last wrote to `path`.
    func isLastWritten(_ hash: ContentHash, at path: String) -> Bool {
        byPath[path] == hash
    }
}

/// The parsed log, kept while the log file's identity is unchanged (every checkpoint appends to
/// it, so a changed log is read again).
final class WrittenHashesCache {
    /// Files a process reads before the log is worth reading for the next ones.
    static let worthReadingAfter = 16

    private var cached: (identity: FileIdentity, hashes: WrittenHashes)?

    /// The hashes as the log holds them now; none when there is no log or it cannot be read.
    /// - Parameter worthReading: Whether to read the log when it is not parsed yet (or changed):
    ///   the whole log costs more than listing one file's kept versions, so only a process that
    ///   reads many files asks for it (a cold `get` or a widget reads a file or two).
    func current(_ fileSystem: FileSystem, worthReading: Bool) -> WrittenHashes {
        guard worthReading || cached != nil else { return .none }
        do {
            guard let identity = try fileSystem.identity(WrittenLog.path) else {
                cached = nil
                return .none
            }
            if let cached, cached.identity == identity { return cached.hashes }
            guard worthReading else { return .none }
            guard let (bytes, read) = try fileSystem.read(WrittenLog.path) else { return .none }
            let hashes = WrittenHashes(log: bytes)
            cached = (read, hashes)
            return hashes
        } catch {
            return .none   // the kept versions answer instead
        }
    }
}

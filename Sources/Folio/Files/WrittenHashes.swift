/// What a checkpoint last did to each file, from `.folio/written`: the transaction and the bytes'
/// hash (none: removed). A file whose hash is its entry is Folio's own version of it, known without
/// listing the file's folder under `.folio/versions/` (one directory read per file, most of a cold
/// scan's system calls besides the reads themselves); the entries newer than a transaction name
/// the files a checkpoint this process did not follow wrote.
///
/// Only ever a shortcut to "yes, Folio's version": a file that differs from its entry (a person's
/// save, a checkpoint cut short, a version kept since without a line: an adopted save, a merge) is
/// checked against the kept versions as before. A file equal to its entry but older than a version
/// kept since holds what Folio last wrote to it, and the journal's records (an adoption) are
/// applied on top of it like on any file.
struct WrittenHashes: Sendable {
    private var last: [String: WrittenLog.Entry] = [:]

    /// The last entry of each file in the log's bytes; nil when they are not a log.
    init?(log bytes: [UInt8]) {
        guard let contents = WrittenLog.parse(bytes) else { return nil }
        last = contents.history.compactMapValues(\.last)
    }

    /// Whether `hash` is what a checkpoint last wrote to `path`.
    func isLastWritten(_ hash: ContentHash, at path: String) -> Bool {
        last[path]?.hash == hash
    }

    /// The files a checkpoint wrote or removed after `transaction` (lines are appended in the
    /// order of their transactions, so a file's last one is its newest).
    func paths(writtenAfter transaction: UInt64) -> [String] {
        last.compactMap { path, entry in entry.transaction > transaction ? path : nil }
    }
}

/// The parsed log, kept while the log file's identity is unchanged (every checkpoint appends to
/// it, so a changed log is read again).
///
/// The log is read only once it costs less than what it saves: one kept-versions folder listed
/// per file loaded, weighed against ``bytesPerLoad`` of log per file loaded so far. The log has a
/// line per outbox command file too, so in a store with tens of thousands of pending commands it
/// is megabytes, most of it about command files; a warm commit that loads a few partition files
/// then lists their kept versions instead of reading (and, after each checkpoint, reading again)
/// a log that grows with the queue. A scan of many files still reads it.
final class WrittenHashesCache {
    /// Files a process reads before the log is worth reading for the next ones.
    static let worthReadingAfter = 16
    /// How much log one file loaded so far makes worth reading: about a page, the size of one
    /// kept-versions folder's listing that the log's line for the file spares.
    static let bytesPerLoad: Int64 = 4096

    private var cached: (identity: FileIdentity, hashes: WrittenHashes)?

    /// The log as it is now; nil when there is none, it cannot be read or parsed, or it is not
    /// worth reading.
    /// - Parameter fileLoads: How many files the process has read so far (`Int.max`: read the
    ///   log whatever its size). The whole log costs more than listing one file's kept versions,
    ///   so only a process that reads many files, at least ``worthReadingAfter`` and one per
    ///   ``bytesPerLoad`` of log, reads it (a cold `get`, a widget or a warm commit reads a few).
    func current(_ fileSystem: FileSystem, fileLoads: Int) -> WrittenHashes? {
        guard fileLoads >= Self.worthReadingAfter || cached != nil else { return nil }
        do {
            guard let identity = try fileSystem.identity(WrittenLog.path) else {
                cached = nil
                return nil
            }
            if let cached, cached.identity == identity { return cached.hashes }
            cached = nil
            guard Self.isWorthReading(size: identity.size, fileLoads: fileLoads), let (bytes, read) = try fileSystem.read(WrittenLog.path),
                let hashes = WrittenHashes(log: bytes)
            else { return nil }
            cached = (read, hashes)
            return hashes
        } catch {
            return nil   // the kept versions answer instead
        }
    }

    /// Whether a log of `size` bytes is worth reading after `fileLoads` files.
    static func isWorthReading(size: Int64, fileLoads: Int) -> Bool {
        fileLoads >= worthReadingAfter && Int64(fileLoads) >= size / bytesPerLoad
    }
}

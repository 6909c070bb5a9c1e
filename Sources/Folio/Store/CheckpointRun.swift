/// One checkpoint, as a value made when it starts and dropped when it ends: what it notes in
/// `.folio/written` before it replaces or removes a file (``WrittenLog``; the file then holds
/// every record before the journal's next transaction, read at each note, since a checkpoint may
/// commit adopted edits while it runs).
///
/// Every step of a checkpoint that changes a file takes the run as an argument; nothing outside
/// a checkpoint can note a write.
struct CheckpointRun {
    /// The log's appender (nil when the store is read-only: nothing is written).
    private let appender: WrittenLog.Appender?
    private let cursor: JournalCursor

    init(appender: WrittenLog.Appender?, cursor: JournalCursor) {
        self.appender = appender
        self.cursor = cursor
    }

    /// Notes, before a file is replaced or removed, what it will hold (nil: no file).
    func noteWrite(_ path: String, _ hash: ContentHash?) throws(FolioError) {
        try appender?.add(WrittenLog.line(path, WrittenLog.Entry(transaction: cursor.nextTransaction, hash: hash)))
    }

    /// Ends the run's lines: `C t` when the journal is about to be emptied at `t`, then one sync
    /// (unless `sync` is false: the checkpoint's barrier makes them durable).
    /// - Returns: Whether the log was written to (false when read-only).
    func finish(emptiesJournal: Bool, sync: Bool) throws(FolioError) -> Bool {
        guard let appender else { return false }
        if emptiesJournal { try appender.add("C \(cursor.nextTransaction)\n") }
        try appender.finish(sync: sync)
        return true
    }
}

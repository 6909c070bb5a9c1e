/// Whether a folder that is a copy of a store holds files and a journal that belong together
/// (FORMAT.md, "Copying the folder").
///
/// A tool that copies a live folder (rsync, cp, a sync tool) reads its files one by one: a data
/// file read after a checkpoint and a journal read before it (or the reverse) make a copy that
/// holds part of a transaction. ``WrittenLog`` says which bytes every file held after each
/// checkpoint, so the copy can be checked against its own journal: the journal starts at
/// transaction `b` (the checkpoint that last emptied it) and its valid records end before `e`.
/// The copy is a prefix of the store's history exactly when every file holds a version that was
/// current at some instant between that checkpoint and the last record copied: the version the
/// log names as of `b`, or one a checkpoint running at `e` wrote (its records are all in the
/// journal, and applying them again changes nothing). Anything else is refused, naming the file:
/// an older or newer version Folio wrote, a file Folio removed, a missing one, or bytes Folio
/// never wrote (copied in the middle of a checkpoint after the log was copied, or edited by a
/// person before any Folio process read the edit: the two cannot be told apart in a copy).
struct CopyCheck {
    struct Finding: Equatable {
        var path: String
        var message: String
    }

    let fileSystem: FileSystem

    /// Whether the folder is a copy: its log names another lock file than its own (or it has no
    /// lock file at all).
    func isCopy(_ log: WrittenLog.Contents) throws(FolioError) -> Bool {
        guard let origin = try WrittenLog(fileSystem: fileSystem).origin() else { return true }
        return origin.device != log.origin.device || origin.inode != log.origin.inode
    }

    /// What makes the copy inconsistent, most telling first (empty: consistent), and the hash of
    /// every data and command file the copy holds.
    /// - Parameters:
    ///   - log: The copy's `.folio/written`.
    ///   - firstTransaction: The copy's journal header's first transaction (nil: no header).
    ///   - end: The transaction after the copy's last valid journal record.
    func findings(_ log: WrittenLog.Contents, firstTransaction: UInt64?, end: UInt64) throws(FolioError)
        -> (findings: [Finding], hashes: [String: ContentHash])
    {
        let written = log.history.values.contains { $0.contains { $0.hash != nil } }
        guard let b = firstTransaction else {
            let finding = Finding(
                path: StoreLayout.journal,
                message: "the copy's journal has no header, but its files were written by checkpoints: it was copied while being emptied")
            return (written ? [finding] : [], [:])
        }
        if b < log.since || (b != log.since && !log.checkpoints.contains(b)) {
            let finding = Finding(
                path: WrittenLog.path,
                message:
                    "the copy's journal was emptied by checkpoint \(b), which its log of written files does not record: the log was copied before that checkpoint, so no file of the copy can be matched to the journal"
            )
            return ([finding], [:])
        }
        var findings: [Finding] = []
        let ordered = Set(log.history.keys).union(try Self.dataAndCommandFiles(fileSystem)).sorted()
        // Read and hashed on several threads: a copy's first open reads every file, often from
        // a cold cache.
        let fileSystem = self.fileSystem
        let read = parallelMap(ordered, width: StoreEngine.scanWidth) { path in
            Result { () throws(FolioError) -> ContentHash? in try fileSystem.read(path).map { ContentHash($0.bytes) } }
        }
        var hashes: [String: ContentHash] = [:]
        for (path, result) in zip(ordered, read) {
            let current = try result.get()
            hashes[path] = current
            let history = log.history[path] ?? []
            guard let problem = judge(path, current: current, history: history, log: log, b: b, end: end) else { continue }
            // Rare: read again for the checks that excuse a damaged data file or a command cut short.
            let bytes = try fileSystem.read(path)?.bytes
            if !Self.isDamagedDataFile(path, bytes), !Self.isCutShortCommand(path, bytes, history: history, b: b, end: end) {
                findings.append(Finding(path: path, message: problem))
            }
        }
        return (findings, hashes)
    }

    private func judge(
        _ path: String, current: ContentHash?, history: [WrittenLog.Entry], log: WrittenLog.Contents,
        b: UInt64, end: UInt64
    ) -> String? {
        if history.isEmpty {
            guard current != nil else { return nil }
            if let sequence = CommandFileName.sequence(ofPath: path), sequence < log.goneBelow {
                return "a command file Folio removed (sent) before the copy's journal began: it was copied before the removal"
            }
            return
                "a file no checkpoint recorded writing: written while the folder was copied (after the log was copied), or made by hand and never read by Folio"
        }
        // The version current as of b, and every one written by a checkpoint up to the journal's end.
        let asOfB = history.lastIndex { $0.transaction <= b }
        var allowed: [ContentHash?] = asOfB == nil ? [nil] : []
        for entry in history[(asOfB ?? 0)...] where entry.transaction <= end { allowed.append(entry.hash) }
        if allowed.contains(current) { return nil }
        let expected = asOfB.map { history[$0] }
        let want = expected.map { $0.hash.map { "the version with hash \($0)" } ?? "no file" } ?? "no file"
        guard let current else {
            return
                "missing: the copy's journal (emptied at transaction \(b)) needs \(want) here; the file was copied before a checkpoint created it, or after one removed it"
        }
        if let other = history.last(where: { $0.hash == current }) {
            let when =
                other.transaction > end
                ? "newer than the copy's journal (written by the checkpoint at transaction \(other.transaction), after the journal was copied)"
                : "older than the copy's journal (written by the checkpoint at transaction \(other.transaction); the journal needs \(want))"
            return "holds a version Folio wrote that is \(when)"
        }
        return
            "holds bytes no checkpoint wrote (hash \(current)): written while the folder was copied, or edited by hand before any Folio process read the edit; the copy's journal needs \(want)"
    }

    /// A data file that does not parse is damage, never a tear: Folio replaces data files whole
    /// (by rename or exchange), so a copy cannot catch one half-written. Such a file is left to
    /// the broken-file handling (reported with its line and column, blocking nothing else).
    static func isDamagedDataFile(_ path: String, _ bytes: [UInt8]?) -> Bool {
        guard let bytes, CommandFileName.sequence(ofPath: path) == nil else { return false }
        do {
            _ = try PartitionFile.decode(bytes, path: path)
            return false
        } catch {
            return true
        }
    }

    /// A command file that is not a whole command, written by a checkpoint the copy's journal
    /// covers (after `b`, up to `end`): a checkpoint writes command files in place, and one cut
    /// short (a kill, a power cut) is rewritten from the journal by the next open (FORMAT.md,
    /// "Command files cut short"). Not a tear.
    static func isCutShortCommand(_ path: String, _ bytes: [UInt8]?, history: [WrittenLog.Entry], b: UInt64, end: UInt64) -> Bool {
        guard let bytes, let sequence = CommandFileName.sequence(ofPath: path),
            history.contains(where: { $0.hash != nil && $0.transaction > b && $0.transaction <= end })
        else { return false }
        do {
            return try OutboxCommand(json: try JSONParser.parse(bytes), path: path).sequence != sequence
        } catch {
            return true
        }
    }

    /// Every data file and pending or failed command file, by the exact names FORMAT.md gives them.
    static func dataAndCommandFiles(_ fileSystem: FileSystem) throws(FolioError) -> [String] {
        var found: [String] = []
        for entry in try fileSystem.list("") {
            if entry.isDirectory {
                if entry.name == StoreLayout.machinery { continue }
                if entry.name == "outbox" {
                    for folder in ["outbox", "outbox/failed"] {
                        for file in try fileSystem.list(folder) where !file.isDirectory && CommandFileName.sequence(ofPath: folder + "/" + file.name) != nil {
                            found.append(folder + "/" + file.name)
                        }
                    }
                    continue
                }
                for month in try fileSystem.list(entry.name) {
                    if !month.isDirectory, DataFileName.month(fileName: month.name) != nil {
                        found.append(entry.name + "/" + month.name)
                    } else if month.isDirectory, DataFileName.isMonthFolder(month.name) {
                        let folder = entry.name + "/" + month.name
                        for day in try fileSystem.list(folder) where !day.isDirectory && DataFileName.day(fileName: day.name, inMonthFolder: month.name) != nil
                        {
                            found.append(folder + "/" + day.name)
                        }
                    }
                }
            } else if entry.name.hasSuffix(".json"), entry.name != StoreLayout.marker, !entry.name.hasPrefix(".") {
                found.append(entry.name)
            }
        }
        return found
    }
}

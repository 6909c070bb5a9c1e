/// `.folio/written`: which bytes each checkpoint left in each data file and outbox command file
/// (FORMAT.md, "`.folio/written`"). It is what lets a copy of a live folder (rsync, cp, a sync
/// tool: files copied one by one, at different instants) tell whether its files and its journal
/// belong together, see ``CopyCheck``.
///
/// Plain text, one line each, appended at every checkpoint before the journal is emptied:
///
/// ```
/// folio-written 1 origin <device> <inode> since <t> gone-below <s>
/// W <t> <hash> <path>      after the checkpoint emptying the journal at transaction t, path holds these bytes
/// R <t> <path>             … path does not exist
/// C <t>                    the checkpoint that empties the journal at transaction t wrote all its lines
/// ```
///
/// `origin` is the device and inode of the store's `.folio/lock`, which is created once and never
/// replaced: a folder whose lock has another identity is a copy. `since` is where the log starts
/// (a journal older than that cannot be checked); command files numbered below `gone-below` with
/// no line were sent and removed before the log was last compacted. A torn last line (a crash in
/// an append) is ignored and cut off by the next append.
struct WrittenLog {
    static let path = StoreLayout.machinery + "/written"
    /// Beyond this size, and twice the size it had when last rewritten (its `K` line), the next
    /// checkpoint rewrites the log with one line per file: a store of many files (a long outbox)
    /// whose rewritten log is itself past this size is not rewritten at every checkpoint.
    static let compactionSize: Int64 = 4 << 20

    struct Entry: Equatable {
        /// The transaction the journal was emptied at (or is about to be) after this write.
        var transaction: UInt64
        /// The file's bytes, or nil: no file.
        var hash: ContentHash?
    }

    struct Contents {
        var origin: (device: UInt64, inode: UInt64)
        var since: UInt64
        var goneBelow: UInt64
        /// Every line of each file, in order.
        var history: [String: [Entry]] = [:]
        /// Checkpoints whose lines are complete.
        var checkpoints: Set<UInt64> = []
        /// The size the log had when it was last rewritten (its `K` line; nil without one).
        var compactedSize: Int64?
    }

    let fileSystem: FileSystem

    /// The log, or nil when there is none. A log whose first line is not a header reads as damage.
    func read() throws(FolioError) -> Contents? {
        guard let bytes = try bytes() else { return nil }
        return try Self.contents(bytes)
    }

    /// The log's first lines (its header and `K` line), or nil when there is none: all an open
    /// needs to tell the store from a copy, and a checkpoint to decide whether to rewrite it,
    /// read without reading a log of many megabytes.
    func head() throws(FolioError) -> Contents? {
        guard let file = try FileSystem.OpenFile(fileSystem, Self.path) else { return nil }
        var bytes = try file.read(0..<1024)
        let lines = bytes.split(separator: 0x0A, maxSplits: 2, omittingEmptySubsequences: false)
        if lines.count < 3 && bytes.count == 1024 { bytes = try file.read(0..<Int(file.identity.size)) }
        return try Self.contents(bytes, headerOnly: true)
    }

    /// The log's bytes, or nil when there is none.
    func bytes() throws(FolioError) -> [UInt8]? {
        try fileSystem.read(Self.path)?.bytes
    }

    /// The log in `bytes`; a first line that is not a header is damage.
    /// - Parameter headerOnly: Parse the header only (its `history` and `checkpoints` stay empty):
    ///   all an open needs to tell the store from a copy of it.
    static func contents(_ bytes: [UInt8], headerOnly: Bool = false) throws(FolioError) -> Contents {
        guard let contents = Self.parse(bytes, headerOnly: headerOnly) else {
            throw FolioError(.corruptFile, "the first line is not a `folio-written 1` header", path: Self.path)
        }
        return contents
    }

    static func parse(_ bytes: [UInt8], headerOnly: Bool = false) -> Contents? {
        // Only complete lines: the last one may be an append cut short.
        guard let end = bytes.lastIndex(of: 0x0A), let firstEnd = bytes.firstIndex(of: 0x0A) else { return nil }
        let head = String(decoding: bytes[..<firstEnd], as: UTF8.self).split(separator: " ")
        guard head.count == 9, head[0] == "folio-written", head[1] == "1", head[2] == "origin", head[5] == "since",
            head[7] == "gone-below", let device = UInt64(head[3]), let inode = UInt64(head[4]),
            let since = UInt64(head[6]), let goneBelow = UInt64(head[8])
        else { return nil }
        var contents = Contents(origin: (device, inode), since: since, goneBelow: goneBelow)
        let lines = bytes[..<end].split(separator: 0x0A, maxSplits: headerOnly ? 2 : Int.max, omittingEmptySubsequences: false)
        if lines.count > 1, lines[1].first == UInt8(ascii: "K") {
            let fields = String(decoding: lines[1], as: UTF8.self).split(separator: " ")
            if fields.count == 2 { contents.compactedSize = Int64(fields[1]) }
        }
        if headerOnly { return contents }
        for line in lines.dropFirst() {
            let text = String(decoding: line, as: UTF8.self)
            let fields = text.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: false)
            switch (fields.first, fields.count) {
            case ("W"?, 4):
                guard let t = UInt64(fields[1]), let hash = ContentHash(hex: fields[2]) else { continue }
                contents.history[String(fields[3]), default: []].append(Entry(transaction: t, hash: hash))
            case ("R"?, 3):
                guard let t = UInt64(fields[1]) else { continue }
                contents.history[String(fields[2]), default: []].append(Entry(transaction: t, hash: nil))
            case ("C"?, 2):
                if let t = UInt64(fields[1]) { contents.checkpoints.insert(t) }
            default:
                continue
            }
        }
        return contents
    }

    static func line(_ path: String, _ entry: Entry) -> String {
        if let hash = entry.hash { return "W \(entry.transaction) \(hash) \(path)\n" }
        return "R \(entry.transaction) \(path)\n"
    }

    static func header(origin: (device: UInt64, inode: UInt64), since: UInt64, goneBelow: UInt64) -> String {
        "folio-written 1 origin \(origin.device) \(origin.inode) since \(since) gone-below \(goneBelow)\n"
    }

    /// The line after the header of a rewritten log: the size of the lines it was rewritten with.
    static func compactedLine(_ size: Int) -> String {
        "K \(size)\n"
    }

    /// The identity of this folder's lock file, which the header names.
    func origin() throws(FolioError) -> (device: UInt64, inode: UInt64)? {
        guard let identity = try fileSystem.identity(StoreLayout.lockFile) else { return nil }
        return (identity.device, identity.inode)
    }

    /// Opens the log for a checkpoint's appends (nil when there is no log).
    func appender() throws(FolioError) -> Appender? {
        guard try fileSystem.identity(Self.path) != nil else { return nil }
        return try Appender(fileSystem)
    }

    /// A checkpoint's appends: each line is written before the file it names is replaced or
    /// removed, so that every version of a file that is ever in place is in the log (a copy
    /// taken after a crash in the middle of a checkpoint then passes); the lines are synced
    /// once, before the journal is emptied.
    final class Appender {
        private let fileSystem: FileSystem
        private let fd: Int32
        private var offset: Int64
        private var closed = false

        /// Opens the log and cuts off a torn last line (a crash in an earlier append).
        init(_ fileSystem: FileSystem) throws(FolioError) {
            self.fileSystem = fileSystem
            fd = try fileSystem.openForUpdate(WrittenLog.path)
            do throws(FolioError) {
                let (identity, code) = Platform.identity(ofOpen: fd)
                guard let identity else { throw .system("fstat", path: WrittenLog.path, errno: code) }
                offset = identity.size
                guard offset > 0 else { return }
                let window = Int(min(offset, 4096))
                var tail = [UInt8](repeating: 0, count: window)
                let count = tail.withUnsafeMutableBytes { Platform.readAll(fd, into: $0, at: offset - Int64(window)) }
                if count != window { throw .system("read", path: WrittenLog.path, errno: Platform.lastError) }
                if tail.last != 0x0A {
                    offset -= Int64(window - ((tail.lastIndex(of: 0x0A) ?? -1) + 1))
                    try fileSystem.truncate(fd, to: offset, path: WrittenLog.path)
                }
            } catch {
                _ = Platform.close(fd)
                throw error
            }
        }

        deinit { if !closed { _ = Platform.close(fd) } }

        func add(_ text: String) throws(FolioError) {
            let bytes = Array(text.utf8)
            try fileSystem.write(fd, bytes, at: offset, path: WrittenLog.path)
            offset += Int64(bytes.count)
        }

        /// Syncs what was added (unless a barrier that follows covers it), and closes the log.
        func finish(sync: Bool = true) throws(FolioError) {
            defer {
                closed = true
                _ = Platform.close(fd)
            }
            if sync { try fileSystem.sync(fd, path: WrittenLog.path, .data) }
        }
    }

    /// Replaces the log (temp file, sync, rename, sync of the folder).
    func replace(with text: String) throws(FolioError) {
        try AtomicFile(fileSystem: fileSystem).replace(Self.path, with: Array(text.utf8))
    }

    /// The current size of the log (0 when there is none).
    func size() throws(FolioError) -> Int64 {
        try fileSystem.identity(Self.path)?.size ?? 0
    }
}

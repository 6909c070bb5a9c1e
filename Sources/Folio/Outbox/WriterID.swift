internal import Foundation

/// Which writer this folder instance is: the prefix of the idempotency keys of the commands it
/// enqueues (FORMAT.md, `.folio/writer.json`).
///
/// Copies of a store (`cp -a`, rsync, `git clone`, unison, a restored backup) keep `folio.json`'s
/// store id, and each copy numbers its commands on from the same sequence: were keys made of the
/// store id, two copies would send different commands under the same key, which a server refuses
/// (422) or, worse, answers from its memory of the other copy's command. So every folder instance
/// is its own writer: `.folio/writer.json` names a writer id together with the identity (device
/// and inode) of the folder's own `.folio/lock`, and an open that finds the file missing, unreadable
/// or naming another lock (the folder was copied, or `.folio/` was left out of the copy) makes a new
/// writer id. Commands already queued keep their ids: they may have been sent under them.
///
/// Owned by the writers' lock: made and read only while it is held, at open.
enum WriterID {
    static let path = ".folio/writer.json"

    /// The writer id of this folder instance, made (durably) when the folder has none of its own.
    /// - Returns: The writer id.
    static func ensure(in fileSystem: FileSystem, report: (LogMessage.Level, String) -> Void) throws(FolioError) -> String {
        guard let lock = try fileSystem.identity(StoreLayout.lockFile) else {
            throw FolioError(.io, "the writers' lock file is missing while it is held", path: StoreLayout.lockFile)
        }
        if let (bytes, _) = try fileSystem.read(path) {
            do {
                if let record = Record(try JSONParser.parse(bytes)) {
                    if record.names(lock) { return record.writer }
                    report(
                        .info,
                        "this folder is a copy of another (its lock is another file): it becomes a writer of its own, and the commands it enqueues from now on get idempotency keys of their own"
                    )
                } else {
                    report(.warning, Record.expected + "; a new writer id is made")
                }
            } catch {
                report(.warning, "invalid JSON (\(error.message)); a new writer id is made")
            }
        }
        let writer = UUID().uuidString
        let file: JSONValue = .object([
            "writer": .string(writer),
            "lockDevice": .number(String(lock.device)),
            "lockInode": .number(String(lock.inode)),
        ])
        try AtomicFile(fileSystem: fileSystem).replace(path, with: JSONWriter.pretty(file))
        try fileSystem.syncDirectory(StoreLayout.machinery)
        return writer
    }

    /// A writer id goes into idempotency keys (`<writer>-<20 digits>`, PROTOCOL.md: visible
    /// ASCII): 1 to 128 bytes of visible ASCII.
    static func isValid(_ writer: String) -> Bool {
        !writer.isEmpty && writer.utf8.count <= 128 && writer.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }
    }

    /// The content of `.folio/writer.json`.
    struct Record {
        static let expected = "expected {\"writer\": <id>, \"lockDevice\": <number>, \"lockInode\": <number>}"
        var writer: String
        var lockDevice: UInt64
        var lockInode: UInt64

        /// The record a parsed file holds, or nil when it is not one.
        init?(_ value: JSONValue) {
            guard let writer = value["writer"]?.stringValue, WriterID.isValid(writer),
                case .number(let device)? = value["lockDevice"], let lockDevice = UInt64(device),
                case .number(let inode)? = value["lockInode"], let lockInode = UInt64(inode)
            else { return nil }
            (self.writer, self.lockDevice, self.lockInode) = (writer, lockDevice, lockInode)
        }

        /// Whether it was made beside this lock file (this folder instance's).
        func names(_ lock: FileIdentity) -> Bool { lockDevice == lock.device && lockInode == lock.inode }
    }
}

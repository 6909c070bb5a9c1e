/// One durability barrier for many writes: the files and folders written through it are on
/// stable storage once ``flush()`` returns, for one sync of the whole file system where the
/// platform has one, instead of one sync per file and per folder.
///
/// - `fileSystem` (Linux): nothing is synced as it is written; ``flush()`` is one `syncfs` on the
///   store's folder, which makes every file's data and every folder entry created, renamed or
///   removed on that file system durable (the journal's too). Should the kernel refuse `syncfs`
///   at run time, `sync(2)` does the same for every file system.
/// - `driveCache` (Apple platforms): each file is fsynced as it is written and each folder at the
///   flush, which only reaches the drive's cache; one `F_FULLFSYNC` then flushes that cache.
/// - `perFile` (no `syncfs`): each file is fsynced fully as it is written, each folder at the
///   flush: one sync per file, as without a barrier.
///
/// - warning: `syncfs` flushes everything dirty on the store's file system, other programs'
///   writes included: on a disk busy with a large copy, a checkpoint waits for it. And before
///   Linux 5.8 it does not report a failed writeback (later kernels do, like `fsync`).
///
/// What is not covered until the flush returns may be lost or torn by a power cut (a kill -9
/// loses nothing: the page cache survives it): callers write only what something else still
/// holds until then (the journal), or what is not yet in place (a temp file renamed after the
/// flush).
final class DurabilityBarrier {
    enum Kind { case fileSystem, driveCache, perFile }

    let fileSystem: FileSystem
    let kind: Kind
    /// Folders whose entries changed since the last flush (synced by it unless it covers them).
    private var folders: Set<String> = []
    /// Folders known to exist (made or checked through the barrier): not checked again.
    private var existing: Set<String> = []

    init(fileSystem: FileSystem, kind: Kind = DurabilityBarrier.platformKind) {
        self.fileSystem = fileSystem
        self.kind = kind
    }

    /// The platform's kind: `driveCache` where `fsync` stops at the drive's cache (Apple
    /// platforms), else `fileSystem` where `syncfs` exists (Linux), else `perFile`.
    static var platformKind: Kind {
        if Platform.fsyncStopsAtDriveCache { return .driveCache }
        return Platform.canSyncFileSystem ? .fileSystem : .perFile
    }

    /// Whether ``flush()`` makes every file of the store durable, including ones not written
    /// through the barrier (the journal).
    var coversEverything: Bool { kind == .fileSystem }

    /// How a file written before the flush is synced as it is closed.
    var fileSync: FileSystem.NewFileSync {
        switch kind {
        case .fileSystem: return .none
        case .driveCache: return .toDrive
        case .perFile: return .all
        }
    }

    /// Notes a folder whose entries changed (a file created, renamed or removed in it).
    func noteFolder(_ relative: String) {
        if kind != .fileSystem { folders.insert(relative) }
    }

    /// Creates a folder and its missing parents, durable at the flush.
    func makeDirectory(_ relative: String) throws(FolioError) {
        guard !existing.contains(relative) else { return }
        for parent in try fileSystem.makeDirectories(relative) { noteFolder(parent) }
        existing.insert(relative)
    }

    /// Makes everything written through the barrier since the last flush durable.
    func flush() throws(FolioError) {
        switch kind {
        case .fileSystem:
            if try fileSystem.syncFileSystem() { return }
            // Refused at run time: the whole machine's, then, which covers ours.
            Platform.syncEverything()
        case .perFile, .driveCache:
            for folder in folders.sorted() { try fileSystem.syncDirectory(folder, toDriveOnly: kind == .driveCache) }
            folders = []
            // The drive's cache (`F_FULLFSYNC` on Apple platforms), through the store's folder.
            if kind == .driveCache { try fileSystem.syncDirectory("") }
        }
    }
}

extension FileSystem {
    /// One `syncfs` on the store's folder (Linux): everything written to its file system is
    /// durable when this returns. Returns false, having done nothing, where there is no such call.
    func syncFileSystem() throws(FolioError) -> Bool {
        guard Platform.canSyncFileSystem else { return false }
        let fd = Platform.open(absolute(""), flags: Platform.directoryOnly)
        if fd < 0 { throw .system("open directory", path: ".", errno: Platform.lastError) }
        defer { _ = Platform.close(fd) }
        try step(.syncFileSystem)
        let code = Platform.syncFileSystem(fd)
        if code == Platform.notSupported { return false }
        if code != 0 { throw .system("syncfs", path: ".", errno: code) }
        return true
    }
}

internal import Dispatch

/// The writers' lock: `flock` on the permanent file `.folio/lock`.
///
/// A process holds it exclusively while it appends to the journal and until that append is
/// synced, and while it checkpoints; readers that must load files take it shared, so they never
/// see a checkpoint half done. The file is never deleted, and `flock` locks belong to the open
/// file, so the kernel drops them when the holder dies: a writer killed while holding the lock
/// blocks nobody. Exclusive and shared use two separate open files, because `flock` on one open
/// file converts rather than stacks.
final class FileLock: @unchecked Sendable {
    private let exclusiveFD: Int32
    private let sharedFD: Int32

    /// The lock of a store opened read-only: the existing lock file opened for reading (which
    /// is enough for `flock`), or no lock at all when there is no lock file.
    init(readingOnly fileSystem: FileSystem) {
        exclusiveFD = -1
        sharedFD = Platform.open(fileSystem.absolute(StoreLayout.lockFile), flags: Platform.readOnly)
    }

    init(fileSystem: FileSystem) throws(FolioError) {
        exclusiveFD = try fileSystem.openForUpdate(StoreLayout.lockFile)
        do {
            sharedFD = try fileSystem.openForUpdate(StoreLayout.lockFile)
        } catch {
            _ = Platform.close(exclusiveFD)
            throw error
        }
    }

    private var closed = false
    private let closing = NSLockShim()

    deinit {
        close()
    }

    /// Closes the lock file, which drops any lock this process holds on it.
    func close() {
        let first = closing.withLock { () -> Bool in
            defer { closed = true }
            return !closed
        }
        guard first else { return }
        if exclusiveFD >= 0 { _ = Platform.close(exclusiveFD) }
        if sharedFD >= 0 { _ = Platform.close(sharedFD) }
    }

    /// Takes the lock, waiting (off the caller's thread) while another process holds it.
    func acquire(exclusive: Bool) async throws(FolioError) {
        let fd = exclusive ? exclusiveFD : sharedFD
        guard fd >= 0 else { return }
        let code = Platform.lock(fd, exclusive: exclusive, wait: false)
        if code == 0 { return }
        guard Platform.isWouldBlock(code) else { throw .system("flock", path: StoreLayout.lockFile, errno: code) }
        let result: Int32 = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(returning: Platform.lock(fd, exclusive: exclusive, wait: true))
            }
        }
        if result != 0 { throw .system("flock", path: StoreLayout.lockFile, errno: result) }
    }

    func release(exclusive: Bool) {
        _ = Platform.unlock(exclusive ? exclusiveFD : sharedFD)
    }
}

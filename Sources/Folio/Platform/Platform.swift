#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#elseif canImport(Darwin)
internal import Darwin
#endif

/// The one place where Folio talks to the C library. Everything else calls these wrappers, so the
/// Glibc / Musl / Darwin differences stay here.
enum Platform {
    /// The current `errno`.
    static var lastError: Int32 { errno }

    static func open(_ path: String, flags: Int32, mode: UInt32 = 0o644) -> Int32 {
        #if canImport(Darwin)
        return Darwin.open(path, flags | O_CLOEXEC, mode_t(mode))
        #else
        return retryOnInterrupt { Glibc.open(path, flags | O_CLOEXEC, mode_t(mode)) }
        #endif
    }

    static let readOnly = O_RDONLY
    static let readWrite = O_RDWR
    static let createExclusiveWriteOnly = O_WRONLY | O_CREAT | O_EXCL
    static let createReadWrite = O_RDWR | O_CREAT
    static let createTruncateWriteOnly = O_WRONLY | O_CREAT | O_TRUNC
    static let directoryOnly = O_RDONLY | O_DIRECTORY

    static func close(_ fd: Int32) -> Int32 {
        #if canImport(Darwin)
        return Darwin.close(fd)
        #else
        return Glibc.close(fd)
        #endif
    }

    /// Writes all of `bytes` at `offset`, looping over short writes and EINTR.
    /// Returns 0, or the errno of the failure.
    static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int64) -> Int32 {
        var done = 0
        while done < bytes.count {
            let n = pwrite(fd, bytes.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done))
            if n < 0 {
                if errno == EINTR { continue }
                return errno
            }
            if n == 0 { return EIO }
            done += n
        }
        return 0
    }

    /// Reads up to `count` bytes at `offset`; fewer only at the end of the file.
    static func readAll(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) -> Int {
        var done = 0
        while done < buffer.count {
            let n = pread(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
            if n < 0 {
                if errno == EINTR { continue }
                return -1
            }
            if n == 0 { break }
            done += n
        }
        return done
    }

    /// Flushes a file's data and metadata to stable storage. On Apple platforms `fsync` only reaches
    /// the drive's cache, so this uses `F_FULLFSYNC`, falling back to `fsync` where the file system
    /// does not support it (network volumes).
    static func fullSync(_ fd: Int32) -> Int32 {
        #if canImport(Darwin)
        if fcntl(fd, F_FULLFSYNC) == 0 { return 0 }
        return fsync(fd) == 0 ? 0 : errno
        #else
        return retryOnInterrupt { fsync(fd) } == 0 ? 0 : errno
        #endif
    }

    /// Flushes every file of the file system that holds `fd` to stable storage in one call (Linux
    /// `syncfs`): data, metadata and the entries of every folder, for bulk writes of thousands of
    /// files (a checkpoint, a migration) instead of one fsync each. `ENOSYS` where there is no such
    /// call (Apple platforms, a C library without it, a sandbox that refuses it).
    static func syncFileSystem(_ fd: Int32) -> Int32 {
        #if os(Linux)
        guard let syncfs = LinuxSyncFS.function else { return ENOSYS }
        return retryOnInterrupt { syncfs(fd) } == 0 ? 0 : errno
        #else
        return ENOSYS
        #endif
    }

    /// Whether ``syncFileSystem(_:)`` exists here (it may still fail at run time with `ENOSYS`).
    static var canSyncFileSystem: Bool {
        #if os(Linux)
        return LinuxSyncFS.function != nil
        #else
        return false
        #endif
    }

    /// Flushes every file system's dirty data and metadata and waits for it (`sync(2)`, which
    /// waits on Linux): the barrier of last resort when `syncfs` is refused at run time.
    static func syncEverything() {
        sync()
    }

    #if os(Linux)
    private enum LinuxSyncFS {
        typealias Function = @convention(c) (Int32) -> Int32
        // Looked up at run time: Glibc's Swift module does not export syncfs (a GNU extension).
        static let function: Function? = dlsym(nil, "syncfs").map { unsafeBitCast($0, to: Function.self) }
    }
    #endif

    /// Flushes a file to the drive, not through its cache: `fsync` (on Apple platforms the data
    /// then sits in the drive's cache until ``flushDriveCache(_:)``; on Linux `fsync` already
    /// reaches stable storage).
    static func syncToDrive(_ fd: Int32) -> Int32 {
        retryOnInterrupt { fsync(fd) } == 0 ? 0 : errno
    }

    /// Flushes the drive's cache, making everything ``syncToDrive(_:)`` wrote before durable:
    /// `F_FULLFSYNC` on Apple platforms (falling back to `fsync`), `fsync` elsewhere.
    static func flushDriveCache(_ fd: Int32) -> Int32 {
        fullSync(fd)
    }

    /// Flushes a file's data (and the metadata needed to read it back) to stable storage.
    static func dataSync(_ fd: Int32) -> Int32 {
        #if canImport(Darwin)
        return fullSync(fd)
        #else
        return retryOnInterrupt { fdatasync(fd) } == 0 ? 0 : errno
        #endif
    }

    static func truncate(_ fd: Int32, to length: Int64) -> Int32 {
        retryOnInterrupt { ftruncate(fd, off_t(length)) } == 0 ? 0 : errno
    }

    static func rename(_ from: String, _ to: String) -> Int32 {
        #if canImport(Darwin)
        return Darwin.rename(from, to) == 0 ? 0 : errno
        #else
        return Glibc.rename(from, to) == 0 ? 0 : errno
        #endif
    }

    /// Atomically exchanges two existing paths, so each names the other's file: Linux
    /// `renameat2(RENAME_EXCHANGE)` (looked up at run time: glibc 2.28+, not declared to Swift),
    /// Apple `renamex_np(RENAME_SWAP)`. Returns 0, or the errno; see ``isUnsupported(_:)``.
    static func exchange(_ first: String, _ second: String) -> Int32 {
        #if canImport(Darwin)
        return renamex_np(first, second, UInt32(RENAME_SWAP)) == 0 ? 0 : errno
        #else
        guard let renameAt2 = LinuxRename.function else { return ENOSYS }
        return renameAt2(AT_FDCWD, first, AT_FDCWD, second, LinuxRename.exchange) == 0 ? 0 : errno
        #endif
    }

    /// Renames `from` to `to` only if `to` does not exist (EEXIST otherwise), atomically.
    static func renameNoReplace(_ from: String, _ to: String) -> Int32 {
        #if canImport(Darwin)
        return renamex_np(from, to, UInt32(RENAME_EXCL)) == 0 ? 0 : errno
        #else
        guard let renameAt2 = LinuxRename.function else { return ENOSYS }
        return renameAt2(AT_FDCWD, from, AT_FDCWD, to, LinuxRename.noReplace) == 0 ? 0 : errno
        #endif
    }

    /// Whether the file system (or the C library) cannot exchange or rename exclusively.
    static func isUnsupported(_ code: Int32) -> Bool {
        code == ENOSYS || code == EINVAL || code == ENOTSUP || code == EOPNOTSUPP
    }

    #if !canImport(Darwin)
    private enum LinuxRename {
        typealias Function = @convention(c) (Int32, UnsafePointer<CChar>, Int32, UnsafePointer<CChar>, UInt32) -> Int32
        static let noReplace: UInt32 = 1 << 0
        static let exchange: UInt32 = 1 << 1
        static let function: Function? = dlsym(nil, "renameat2").map { unsafeBitCast($0, to: Function.self) }
    }
    #endif

    static func unlink(_ path: String) -> Int32 {
        #if canImport(Darwin)
        return Darwin.unlink(path) == 0 ? 0 : errno
        #else
        return Glibc.unlink(path) == 0 ? 0 : errno
        #endif
    }

    /// A hard link `to` to the file at `from`; 0 or errno.
    static func hardLink(_ from: String, _ to: String) -> Int32 {
        link(from, to) == 0 ? 0 : errno
    }

    /// Whether a failed `link` means the file system cannot link there (another device, no hard
    /// links), so a copy must do instead.
    static func cannotLink(_ code: Int32) -> Bool {
        code == EXDEV || code == EPERM || code == EMLINK || code == ENOTSUP || code == EOPNOTSUPP || code == ENOSYS
    }

    static func makeDirectory(_ path: String) -> Int32 {
        mkdir(path, 0o755) == 0 ? 0 : errno
    }

    static func removeDirectory(_ path: String) -> Int32 {
        rmdir(path) == 0 ? 0 : errno
    }

    /// `flock` on the whole file. Locks belong to the open file description, so closing another
    /// descriptor of the same file (as fcntl locks would) never drops them.
    static func lock(_ fd: Int32, exclusive: Bool, wait: Bool) -> Int32 {
        var operation = exclusive ? LOCK_EX : LOCK_SH
        if !wait { operation |= LOCK_NB }
        return retryOnInterrupt { flock(fd, operation) } == 0 ? 0 : errno
    }

    static func unlock(_ fd: Int32) -> Int32 {
        flock(fd, LOCK_UN) == 0 ? 0 : errno
    }

    static func isWouldBlock(_ code: Int32) -> Bool { code == EWOULDBLOCK || code == EAGAIN }
    static func isNotFound(_ code: Int32) -> Bool { code == ENOENT }
    static func isExisting(_ code: Int32) -> Bool { code == EEXIST }
    static func isDirectoryError(_ code: Int32) -> Bool { code == EISDIR }
    /// A read-only file system or a folder this process may not write.
    static func isNotWritable(_ code: Int32) -> Bool { code == EROFS || code == EACCES || code == EPERM }
    static let ioError = EIO
    static let noSpace = ENOSPC
    static let notSupported = ENOSYS

    static func identity(ofOpen fd: Int32) -> (FileIdentity?, Int32) {
        var info = stat()
        guard fstat(fd, &info) == 0 else { return (nil, errno) }
        return (FileIdentity(info), 0)
    }

    static func identity(atPath path: String) -> (FileIdentity?, Int32) {
        var info = stat()
        guard stat(path, &info) == 0 else { return (nil, errno) }
        return (FileIdentity(info), 0)
    }

    /// The names in a directory (without "." and ".."), unsorted.
    static func directoryEntries(_ path: String) -> ([(name: String, isDirectory: Bool)], Int32) {
        guard let dir = opendir(path) else { return ([], errno) }
        defer { closedir(dir) }
        var result: [(String, Bool)] = []
        while let entry = readdir(dir) {
            let name = withUnsafePointer(to: entry.pointee.d_name) { pointer in
                pointer.withMemoryRebound(to: CChar.self, capacity: Int(NAME_MAX) + 1) { String(cString: $0) }
            }
            if name == "." || name == ".." { continue }
            var isDirectory = Int32(entry.pointee.d_type) == Int32(DT_DIR)
            if Int32(entry.pointee.d_type) == Int32(DT_UNKNOWN) {
                var info = stat()
                if stat(path + "/" + name, &info) == 0 { isDirectory = (info.st_mode & S_IFMT) == S_IFDIR }
            }
            result.append((name, isDirectory))
        }
        return (result, 0)
    }

    static func describe(_ code: Int32) -> String {
        String(cString: strerror(code))
    }

    static var processID: Int32 { getpid() }

    private static func retryOnInterrupt(_ call: () -> Int32) -> Int32 {
        while true {
            let result = call()
            if result == -1 && errno == EINTR { continue }
            return result
        }
    }
}

extension FileIdentity {
    fileprivate init(_ info: stat) {
        #if canImport(Darwin)
        let modified = info.st_mtimespec
        let changed = info.st_ctimespec
        #else
        let modified = info.st_mtim
        let changed = info.st_ctim
        #endif
        self.init(
            device: UInt64(info.st_dev), inode: UInt64(info.st_ino), size: Int64(info.st_size),
            modified: Int64(modified.tv_sec) * 1_000_000_000 + Int64(modified.tv_nsec),
            changed: Int64(changed.tv_sec) * 1_000_000_000 + Int64(changed.tv_nsec),
            isDirectory: (info.st_mode & S_IFMT) == S_IFDIR
        )
    }
}

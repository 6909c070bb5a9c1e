#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#elseif canImport(Darwin)
internal import Darwin
#endif

/// The one place where Folio talks to the C library. Everything else calls these wrappers.
///
/// This file is the same on every platform. What differs is declared by ``PlatformCalls`` below
/// and implemented once per platform, each in a file of its own compiled only there:
/// Platform+Linux.swift (built and tested in CI) and Platform+Darwin.swift (Apple platforms; not
/// compiled by this project's CI).
enum Platform {
    /// The current `errno`.
    static var lastError: Int32 { errno }

    static let readOnly = O_RDONLY
    static let createExclusiveWriteOnly = O_WRONLY | O_CREAT | O_EXCL
    static let createReadWrite = O_RDWR | O_CREAT
    static let createTruncateWriteOnly = O_WRONLY | O_CREAT | O_TRUNC
    static let directoryOnly = O_RDONLY | O_DIRECTORY

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

    /// Flushes every file system's dirty data and metadata and waits for it (`sync(2)`, which
    /// waits on Linux): the barrier of last resort when `syncfs` is refused at run time.
    static func syncEverything() {
        sync()
    }

    /// Flushes a file to the drive, not through its cache: `fsync` (on Apple platforms the data
    /// then sits in the drive's cache until ``fullSync(_:)``; on Linux `fsync` already
    /// reaches stable storage).
    static func syncToDrive(_ fd: Int32) -> Int32 {
        retryOnInterrupt { fsync(fd) } == 0 ? 0 : errno
    }

    static func truncate(_ fd: Int32, to length: Int64) -> Int32 {
        retryOnInterrupt { ftruncate(fd, off_t(length)) } == 0 ? 0 : errno
    }

    /// Whether the file system (or the C library) cannot exchange or rename exclusively.
    static func isUnsupported(_ code: Int32) -> Bool {
        code == ENOSYS || code == EINVAL || code == ENOTSUP || code == EOPNOTSUPP
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
    static let noSpace = ENOSPC
    static let notSupported = ENOSYS

    static func identity(ofOpen fd: Int32) -> (FileIdentity?, Int32) {
        var info = stat()
        guard fstat(fd, &info) == 0 else { return (nil, errno) }
        return (fileIdentity(info), 0)
    }

    static func identity(atPath path: String) -> (FileIdentity?, Int32) {
        var info = stat()
        guard stat(path, &info) == 0 else { return (nil, errno) }
        return (fileIdentity(info), 0)
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

    /// Calls `call` again while it fails with EINTR.
    static func retryOnInterrupt(_ call: () -> Int32) -> Int32 {
        while true {
            let result = call()
            if result == -1 && errno == EINTR { continue }
            return result
        }
    }
}

/// What differs by platform, listed here so that a reader sees every difference at once and the
/// compiler checks that a platform's file provides all of it. Platform+Linux.swift and
/// Platform+Darwin.swift implement it, each compiled only on its own platform.
protocol PlatformCalls {
    /// `open(2)` with `O_CLOEXEC` added: the descriptor, or -1 and ``Platform/lastError``.
    static func open(_ path: String, flags: Int32, mode: UInt32) -> Int32
    /// `close(2)`: 0, or -1 and ``Platform/lastError``.
    static func close(_ fd: Int32) -> Int32
    /// Flushes a file's data and metadata to stable storage, not only to the drive's cache: 0 or
    /// the errno.
    static func fullSync(_ fd: Int32) -> Int32
    /// Flushes a file's data (and the metadata needed to read it back) to stable storage: 0 or
    /// the errno.
    static func dataSync(_ fd: Int32) -> Int32
    /// Flushes every file of the file system that holds `fd` to stable storage in one call (Linux
    /// `syncfs`): data, metadata and the entries of every folder, for bulk writes of thousands of
    /// files (a checkpoint, a migration) instead of one fsync each. `ENOSYS` where there is no such
    /// call (Apple platforms, a C library without it, a sandbox that refuses it).
    static func syncFileSystem(_ fd: Int32) -> Int32
    /// Whether ``syncFileSystem(_:)`` exists here (it may still fail at run time with `ENOSYS`).
    static var canSyncFileSystem: Bool { get }
    /// Whether `fsync` stops at the drive's cache, which only ``fullSync(_:)`` flushes (Apple
    /// platforms); false where `fsync` reaches stable storage (Linux).
    static var fsyncStopsAtDriveCache: Bool { get }
    /// `rename(2)`, replacing `to`: 0 or the errno.
    static func rename(_ from: String, _ to: String) -> Int32
    /// Atomically exchanges two existing paths, so each names the other's file: 0, or the errno;
    /// see ``Platform/isUnsupported(_:)``.
    static func exchange(_ first: String, _ second: String) -> Int32
    /// Renames `from` to `to` only if `to` does not exist (EEXIST otherwise), atomically.
    static func renameNoReplace(_ from: String, _ to: String) -> Int32
    /// `unlink(2)`: 0 or the errno.
    static func unlink(_ path: String) -> Int32
    /// A file's identity from its `stat` (whose time fields are named differently per platform).
    static func fileIdentity(_ info: stat) -> FileIdentity
}

extension Platform: PlatformCalls {}

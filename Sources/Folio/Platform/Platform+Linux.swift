// Linux (glibc): Folio's ``PlatformCalls``, the C library calls that differ from Apple platforms'.
// `fsync` and `fdatasync` reach stable storage; `syncfs` and `renameat2` (RENAME_EXCHANGE,
// RENAME_NOREPLACE) are looked up at run time; `stat` names its times `st_mtim` and `st_ctim`.
// Built and tested by this project's CI (Linux x86_64); Platform+Darwin.swift is the Apple side.
#if os(Linux)
internal import Glibc

extension Platform {
    static func open(_ path: String, flags: Int32, mode: UInt32 = 0o644) -> Int32 {
        retryOnInterrupt { Glibc.open(path, flags | O_CLOEXEC, mode_t(mode)) }
    }

    static func close(_ fd: Int32) -> Int32 {
        Glibc.close(fd)
    }

    /// `fsync`, which on Linux reaches stable storage.
    static func fullSync(_ fd: Int32) -> Int32 {
        retryOnInterrupt { fsync(fd) } == 0 ? 0 : errno
    }

    /// `fdatasync`.
    static func dataSync(_ fd: Int32) -> Int32 {
        retryOnInterrupt { fdatasync(fd) } == 0 ? 0 : errno
    }

    /// `syncfs`, when the C library has it.
    static func syncFileSystem(_ fd: Int32) -> Int32 {
        guard let syncfs = LinuxSyncFS.function else { return ENOSYS }
        return retryOnInterrupt { syncfs(fd) } == 0 ? 0 : errno
    }

    static var canSyncFileSystem: Bool {
        LinuxSyncFS.function != nil
    }

    static var fsyncStopsAtDriveCache: Bool { false }

    private enum LinuxSyncFS {
        typealias Function = @convention(c) (Int32) -> Int32
        // Looked up at run time: Glibc's Swift module does not export syncfs (a GNU extension).
        static let function: Function? = dlsym(nil, "syncfs").map { unsafeBitCast($0, to: Function.self) }
    }

    static func rename(_ from: String, _ to: String) -> Int32 {
        Glibc.rename(from, to) == 0 ? 0 : errno
    }

    /// `renameat2(RENAME_EXCHANGE)` (looked up at run time: glibc 2.28+, not declared to Swift).
    static func exchange(_ first: String, _ second: String) -> Int32 {
        guard let renameAt2 = LinuxRename.function else { return ENOSYS }
        return renameAt2(AT_FDCWD, first, AT_FDCWD, second, LinuxRename.exchange) == 0 ? 0 : errno
    }

    /// `renameat2(RENAME_NOREPLACE)`.
    static func renameNoReplace(_ from: String, _ to: String) -> Int32 {
        guard let renameAt2 = LinuxRename.function else { return ENOSYS }
        return renameAt2(AT_FDCWD, from, AT_FDCWD, to, LinuxRename.noReplace) == 0 ? 0 : errno
    }

    private enum LinuxRename {
        typealias Function = @convention(c) (Int32, UnsafePointer<CChar>, Int32, UnsafePointer<CChar>, UInt32) -> Int32
        static let noReplace: UInt32 = 1 << 0
        static let exchange: UInt32 = 1 << 1
        static let function: Function? = dlsym(nil, "renameat2").map { unsafeBitCast($0, to: Function.self) }
    }

    static func unlink(_ path: String) -> Int32 {
        Glibc.unlink(path) == 0 ? 0 : errno
    }

    static func fileIdentity(_ info: stat) -> FileIdentity {
        let modified = info.st_mtim
        let changed = info.st_ctim
        return FileIdentity(
            device: UInt64(info.st_dev), inode: UInt64(info.st_ino), size: Int64(info.st_size),
            modified: Int64(modified.tv_sec) * 1_000_000_000 + Int64(modified.tv_nsec),
            changed: Int64(changed.tv_sec) * 1_000_000_000 + Int64(changed.tv_nsec),
            isDirectory: (info.st_mode & S_IFMT) == S_IFDIR
        )
    }
}
#endif

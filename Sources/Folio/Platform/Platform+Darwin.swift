// Apple platforms (macOS, iOS, tvOS, watchOS, visionOS): Folio's ``PlatformCalls``, the C library
// calls that differ from Linux's. `fsync` stops at the drive's cache, so durability takes
// `fcntl(F_FULLFSYNC)`; there is no `syncfs`; files are exchanged with `renamex_np(RENAME_SWAP)`
// and renamed exclusively with `renamex_np(RENAME_EXCL)`; `stat` names its times `st_mtimespec`
// and `st_ctimespec`, and its `st_dev` is signed.
// NOT compiled or tested by this project's CI (Linux only): checked by eye against Apple's headers.
#if canImport(Darwin)
internal import Darwin

extension Platform {
    static func open(_ path: String, flags: Int32, mode: UInt32 = 0o644) -> Int32 {
        Darwin.open(path, flags | O_CLOEXEC, mode_t(mode))
    }

    static func close(_ fd: Int32) -> Int32 {
        Darwin.close(fd)
    }

    /// `F_FULLFSYNC`, falling back to `fsync` where the file system does not support it (network
    /// volumes).
    static func fullSync(_ fd: Int32) -> Int32 {
        if fcntl(fd, F_FULLFSYNC) == 0 { return 0 }
        return fsync(fd) == 0 ? 0 : errno
    }

    /// ``fullSync(_:)``: Apple platforms have no data-only sync that passes the drive's cache.
    static func dataSync(_ fd: Int32) -> Int32 {
        fullSync(fd)
    }

    /// There is no `syncfs`: always `ENOSYS`.
    static func syncFileSystem(_ fd: Int32) -> Int32 {
        ENOSYS
    }

    static var canSyncFileSystem: Bool { false }

    static var fsyncStopsAtDriveCache: Bool { true }

    static func rename(_ from: String, _ to: String) -> Int32 {
        Darwin.rename(from, to) == 0 ? 0 : errno
    }

    /// `renamex_np(RENAME_SWAP)`.
    static func exchange(_ first: String, _ second: String) -> Int32 {
        renamex_np(first, second, UInt32(RENAME_SWAP)) == 0 ? 0 : errno
    }

    /// `renamex_np(RENAME_EXCL)`.
    static func renameNoReplace(_ from: String, _ to: String) -> Int32 {
        renamex_np(from, to, UInt32(RENAME_EXCL)) == 0 ? 0 : errno
    }

    static func unlink(_ path: String) -> Int32 {
        Darwin.unlink(path) == 0 ? 0 : errno
    }

    static func fileIdentity(_ info: stat) -> FileIdentity {
        let modified = info.st_mtimespec
        let changed = info.st_ctimespec
        return FileIdentity(
            // dev_t is an Int32 here: taken bit for bit, as a device number with the high bit set
            // (possible on network and FUSE volumes) would trap in UInt64(_:).
            device: UInt64(UInt32(bitPattern: info.st_dev)), inode: UInt64(info.st_ino), size: Int64(info.st_size),
            modified: Int64(modified.tv_sec) * 1_000_000_000 + Int64(modified.tv_nsec),
            changed: Int64(changed.tv_sec) * 1_000_000_000 + Int64(changed.tv_nsec),
            isDirectory: (info.st_mode & S_IFMT) == S_IFDIR
        )
    }
}
#endif

/// Writing a file that must not exist yet: the temp files of atomic replaces and kept versions.
extension FileSystem {
    /// How much of a file is synced (``sync(_:path:_:)``): a new one's before it is closed.
    enum NewFileSync {
        case none, data, all
        /// `fsync` without flushing the drive's cache (Apple platforms): durable only after a
        /// ``DurabilityBarrier`` flushes it.
        case toDrive
    }

    /// Creates `relative` (it must not exist), writes `bytes`, syncs as asked and closes it; on
    /// any failure the file is removed, so a caller never leaves half a file behind.
    /// - Parameter owner: The file the new one is for, named in errors.
    /// - Returns: The new file's identity.
    func writeNewFile(_ relative: String, _ bytes: [UInt8], sync: NewFileSync, for owner: String) throws(FolioError) -> FileIdentity {
        try step(.create(relative))
        let fd = Platform.open(absolute(relative), flags: Platform.createExclusiveWriteOnly)
        if fd < 0 { throw .system("create temp file for", path: owner, errno: Platform.lastError) }
        let identity: FileIdentity
        do throws(FolioError) {
            try write(fd, bytes, at: 0, path: relative)
            try self.sync(fd, path: relative, sync)
            let (stat, code) = Platform.identity(ofOpen: fd)
            guard let stat else { throw .system("fstat", path: relative, errno: code) }
            identity = stat
        } catch {
            _ = Platform.close(fd)
            _ = Platform.unlink(absolute(relative))
            throw error
        }
        if Platform.close(fd) != 0 {
            let code = Platform.lastError
            _ = Platform.unlink(absolute(relative))
            throw .system("close", path: relative, errno: code)
        }
        return identity
    }

    /// Writes a whole file in place: creates it, or empties and rewrites one that exists (what a
    /// crash left of an earlier attempt), then syncs as asked. For files whose every byte is also
    /// in the journal until a barrier makes them durable (outbox command files): a reader that
    /// finds one cut short takes the journal's copy (FORMAT.md, "The outbox").
    /// - Parameter knownAbsent: The caller listed the folder and the file is not there: no `stat`
    ///   to tell a new file from one to rewrite.
    func writeInPlace(_ relative: String, _ bytes: [UInt8], sync: NewFileSync, knownAbsent: Bool = false) throws(FolioError) {
        let exists = knownAbsent ? false : try identity(relative) != nil
        try step(exists ? .truncate(relative) : .create(relative))
        let fd = Platform.open(absolute(relative), flags: Platform.createTruncateWriteOnly)
        if fd < 0 { throw .system("open", path: relative, errno: Platform.lastError) }
        do throws(FolioError) {
            try write(fd, bytes, at: 0, path: relative)
            try self.sync(fd, path: relative, sync)
        } catch {
            _ = Platform.close(fd)
            throw error
        }
        if Platform.close(fd) != 0 { throw .system("close", path: relative, errno: Platform.lastError) }
    }
}

/// Writing a file that must not exist yet: the temp files of atomic replaces and kept versions.
extension FileSystem {
    /// How much of a new file is synced before it is closed.
    enum NewFileSync {
        case none, data, all
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
            if sync != .none { try self.sync(fd, path: relative, dataOnly: sync == .data) }
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
}

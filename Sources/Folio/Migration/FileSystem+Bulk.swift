/// Making many files durable at once, for migrations.
extension FileSystem {
    /// Writes a new file whole (replacing one left by an interrupted attempt) without syncing it.
    func writeWhole(_ relative: String, _ bytes: [UInt8], sync: Bool) throws(FolioError) {
        let fd = try openForUpdate(relative)
        do throws(FolioError) {
            try truncate(fd, to: 0, path: relative)
            try write(fd, bytes, at: 0, path: relative)
            if sync { try self.sync(fd, path: relative) }
        } catch {
            _ = Platform.close(fd)
            throw error
        }
        if Platform.close(fd) != 0 { throw .system("close", path: relative, errno: Platform.lastError) }
    }
}

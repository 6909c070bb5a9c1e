/// Reading parts of a file through one open descriptor: every part comes from the same file, even
/// if another process renames a new one over its name meanwhile.
extension FileSystem {
    /// An open file, read by ranges; closed when released. Sendable: its descriptor is read only
    /// with `pread`, which keeps no position, so threads may read it at once.
    final class OpenFile: @unchecked Sendable {
        let path: String
        /// The open file's identity (`fstat`).
        let identity: FileIdentity
        private let fd: Int32

        /// Opens `relative` for reading; nil when there is no such file.
        /// - Throws: ``FolioError/Code/system`` when it cannot be opened or is a folder.
        init?(_ fileSystem: FileSystem, _ relative: String) throws(FolioError) {
            try fileSystem.step(.read(relative))
            let fd = Platform.open(fileSystem.absolute(relative), flags: Platform.readOnly)
            if fd < 0 {
                let code = Platform.lastError
                if Platform.isNotFound(code) { return nil }
                throw .system("open", path: relative, errno: code)
            }
            let (identity, code) = Platform.identity(ofOpen: fd)
            guard let identity, !identity.isDirectory else {
                _ = Platform.close(fd)
                if identity != nil { throw FileSystem.directoryInstead(of: relative) }
                throw .system("fstat", path: relative, errno: code)
            }
            (self.path, self.fd, self.identity) = (relative, fd, identity)
        }

        deinit { _ = Platform.close(fd) }

        /// The bytes at `range`; fewer when the file ends first.
        func read(_ range: Range<Int>) throws(FolioError) -> [UInt8] {
            var count = 0
            // Not zeroed first: the index's sections are megabytes, read at every query.
            let bytes = [UInt8](unsafeUninitializedCapacity: range.count) { buffer, initialized in
                count = Platform.readAll(fd, into: UnsafeMutableRawBufferPointer(buffer), at: Int64(range.lowerBound))
                initialized = max(count, 0)
            }
            if count < 0 { throw .system("read", path: path, errno: Platform.lastError) }
            return bytes
        }
    }

    /// The bytes at `range` of the file at `relative`, read only if the open file still has
    /// `identity` (so they are the bytes the caller knows the layout of).
    /// - Returns: The bytes, or nil when the file is gone, has another identity, or ends before
    ///   `range` does.
    /// - Throws: ``FolioError/Code/system`` when the file cannot be opened or read.
    func read(_ relative: String, range: Range<Int>, ifIdentity identity: FileIdentity) throws(FolioError) -> [UInt8]? {
        guard let file = try OpenFile(self, relative), file.identity == identity else { return nil }
        let bytes = try file.read(range)
        return bytes.count == range.count ? bytes : nil
    }
}

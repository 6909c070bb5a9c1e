/// The store's access to its folder: every path is relative to the store's root, every failure is
/// a ``FolioError`` naming the file, and every disk-changing step passes the test hook first.
struct FileSystem: Sendable {
    /// The store's folder, absolute, without a trailing slash.
    let root: String
    let hook: IOHook?

    init(root: String, hook: IOHook? = nil) {
        var root = root
        while root.count > 1 && root.hasSuffix("/") { root.removeLast() }
        self.root = root
        self.hook = hook
    }

    func absolute(_ relative: String) -> String {
        relative.isEmpty ? root : root + "/" + relative
    }

    func step(_ step: IOStep) throws(FolioError) {
        try hook?(step)
    }

    // MARK: Reading

    /// The whole file and the identity it had when read, or nil when it does not exist.
    func read(_ relative: String) throws(FolioError) -> (bytes: [UInt8], identity: FileIdentity)? {
        guard let file = try OpenFile(self, relative) else { return nil }
        var bytes = try file.read(0..<Int(file.identity.size))
        // The file may have grown since fstat (an edit in place): read on until the end.
        while bytes.count >= Int(file.identity.size) {
            let more = try file.read(bytes.count..<(bytes.count + 65536))
            if more.isEmpty { break }
            bytes.append(contentsOf: more)
        }
        return (bytes, file.identity)
    }

    /// The identity of a file, or nil when it does not exist.
    func identity(_ relative: String) throws(FolioError) -> FileIdentity? {
        let (identity, code) = Platform.identity(atPath: absolute(relative))
        if let identity { return identity }
        if Platform.isNotFound(code) { return nil }
        throw .system("stat", path: relative, errno: code)
    }

    /// The entries of a directory, or an empty list when it does not exist.
    func list(_ relative: String) throws(FolioError) -> [(name: String, isDirectory: Bool)] {
        let (entries, code) = Platform.directoryEntries(absolute(relative))
        if code != 0 {
            if Platform.isNotFound(code) { return [] }
            throw .system("list directory", path: relative, errno: code)
        }
        return entries
    }

    // MARK: Writing

    /// Opens (creating if needed) a file for reading and writing; the caller closes it. A file it
    /// creates is made durable by syncing its folder before this returns: a power cut must not
    /// lose the name of a file (the journal) whose contents are later synced and relied upon.
    func openForUpdate(_ relative: String) throws(FolioError) -> Int32 {
        let creating = try identity(relative) == nil
        if creating { try step(.create(relative)) }
        let fd = Platform.open(absolute(relative), flags: Platform.createReadWrite)
        if fd < 0 {
            let code = Platform.lastError
            if Platform.isDirectoryError(code) { throw Self.directoryInstead(of: relative) }
            throw .system("open", path: relative, errno: code)
        }
        if creating {
            do throws(FolioError) { try syncDirectory(Self.parent(of: relative)) } catch {
                _ = Platform.close(fd)
                throw error
            }
        }
        return fd
    }

    func write(_ fd: Int32, _ bytes: [UInt8], at offset: Int64, path: String) throws(FolioError) {
        try step(.write(path))
        let code = bytes.withUnsafeBytes { Platform.writeAll(fd, $0, at: offset) }
        if code != 0 { throw .system("write", path: path, errno: code) }
    }

    /// Flushes a file to stable storage as `sync` says: fully by default (`F_FULLFSYNC` on Apple
    /// platforms), nothing for `.none`. A failure is final: the caller must treat what it wrote
    /// since the last successful sync as unknown.
    func sync(_ fd: Int32, path: String, _ sync: NewFileSync = .all) throws(FolioError) {
        guard sync != .none else { return }
        try step(.sync(path))
        let code: Int32
        switch sync {
        case .data: code = Platform.dataSync(fd)
        case .toDrive: code = Platform.syncToDrive(fd)
        case .none, .all: code = Platform.fullSync(fd)
        }
        if code != 0 { throw .system(sync == .data ? "fdatasync" : "fsync", path: path, errno: code) }
    }

    func truncate(_ fd: Int32, to length: Int64, path: String) throws(FolioError) {
        try step(.truncate(path))
        let code = Platform.truncate(fd, to: length)
        if code != 0 { throw .system("truncate", path: path, errno: code) }
    }

    /// Flushes a directory, making the renames, creations and removals in it durable.
    /// - Parameter toDriveOnly: Only as far as the drive's cache (Apple platforms), for a
    ///   ``DurabilityBarrier`` that flushes that cache afterwards.
    func syncDirectory(_ relative: String, toDriveOnly: Bool = false) throws(FolioError) {
        let fd = Platform.open(absolute(relative), flags: Platform.directoryOnly)
        if fd < 0 { throw .system("open directory", path: relative.isEmpty ? "." : relative, errno: Platform.lastError) }
        defer { _ = Platform.close(fd) }
        try sync(fd, path: relative.isEmpty ? "." : relative, toDriveOnly ? .toDrive : .all)
    }

    func rename(_ from: String, to: String) throws(FolioError) {
        try step(.rename(from, to))
        let code = Platform.rename(absolute(from), absolute(to))
        if code != 0 { throw .system("rename to \(to)", path: from, errno: code) }
    }

    /// Atomically swaps two existing files. Returns false when the file system cannot (then
    /// nothing changed), or when one of them does not exist.
    func exchange(_ first: String, _ second: String) throws(FolioError) -> Bool {
        try step(.rename(first, second))
        let code = Platform.exchange(absolute(first), absolute(second))
        if code == 0 { return true }
        if Platform.isUnsupported(code) || Platform.isNotFound(code) { return false }
        throw .system("exchange with \(second)", path: first, errno: code)
    }

    /// Renames `from` to `to` unless `to` exists: true if renamed, false if `to` exists, nil if
    /// the file system cannot rename exclusively (then nothing changed).
    func renameNoReplace(_ from: String, to: String) throws(FolioError) -> Bool? {
        try step(.rename(from, to))
        let code = Platform.renameNoReplace(absolute(from), absolute(to))
        if code == 0 { return true }
        if Platform.isExisting(code) { return false }
        if Platform.isUnsupported(code) { return nil }
        throw .system("rename to \(to)", path: from, errno: code)
    }

    func unlink(_ relative: String) throws(FolioError) {
        try step(.unlink(relative))
        let code = Platform.unlink(absolute(relative))
        if code != 0 && !Platform.isNotFound(code) { throw .system("unlink", path: relative, errno: code) }
    }

    /// Deletes a folder of Folio's own (a staging area, kept versions) and everything in it.
    func removeTree(_ relative: String) throws(FolioError) {
        guard try identity(relative) != nil else { return }
        for entry in try list(relative) {
            let child = relative + "/" + entry.name
            if entry.isDirectory { try removeTree(child) } else { try unlink(child) }
        }
        let code = Platform.removeDirectory(absolute(relative))
        if code != 0 && !Platform.isNotFound(code) { throw .system("rmdir", path: relative, errno: code) }
    }

    /// Creates a directory and any missing parents, each made durable by syncing its parent.
    func makeDirectoryDurably(_ relative: String) throws(FolioError) {
        try makeRootDurably(root)
        for parent in try makeDirectories(relative) { try syncDirectory(parent) }
    }

    /// Creates a directory and any missing parents (inside the store) without syncing anything.
    /// - Returns: The folders whose entries changed (the parents of those created), parents first:
    ///   syncing them, or a barrier, makes the new folders durable.
    func makeDirectories(_ relative: String) throws(FolioError) -> [String] {
        guard !relative.isEmpty, try identity(relative) == nil else { return [] }
        let parent = Self.parent(of: relative)
        var changed = try makeDirectories(parent)
        try step(.makeDirectory(relative))
        let code = Platform.makeDirectory(absolute(relative))
        if code != 0 {
            if Platform.isExisting(code) { return changed }
            throw .system("mkdir", path: relative, errno: code)
        }
        changed.append(parent)
        return changed
    }

    /// Creates the store's folder itself (and its missing parents) if needed.
    private func makeRootDurably(_ path: String) throws(FolioError) {
        let (existing, code) = Platform.identity(atPath: path)
        if existing != nil { return }
        guard Platform.isNotFound(code) else { throw .system("stat", path: path, errno: code) }
        let parent = Self.parent(of: path)
        if !parent.isEmpty { try makeRootDurably(parent) }
        try step(.makeDirectory(path == root ? "." : path))
        let made = Platform.makeDirectory(path)
        if made != 0 && !Platform.isExisting(made) { throw .system("mkdir", path: path, errno: made) }
        let fd = Platform.open(parent.isEmpty ? "/" : parent, flags: Platform.directoryOnly)
        if fd < 0 { throw .system("open directory", path: parent, errno: Platform.lastError) }
        defer { _ = Platform.close(fd) }
        try sync(fd, path: parent)
    }

    /// A folder where Folio expects one of its files (a partition file, the lock, the journal).
    static func directoryInstead(of relative: String) -> FolioError {
        FolioError(.corruptFile, "is a folder, where Folio expects a file: move it out of the way (Folio never deletes or writes into it)", path: relative)
    }

    static func parent(of relative: String) -> String {
        guard let slash = relative.lastIndex(of: "/") else { return "" }
        return String(relative[..<slash])
    }

    static func name(of relative: String) -> String {
        guard let slash = relative.lastIndex(of: "/") else { return relative }
        return String(relative[relative.index(after: slash)...])
    }
}

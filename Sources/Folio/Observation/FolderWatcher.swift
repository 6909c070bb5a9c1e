internal import Dispatch
#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#elseif canImport(Darwin)
internal import Darwin
#endif

/// Tells the store, soon after it happens, that files in its folder changed: inotify on Linux,
/// dispatch sources on Apple platforms. It only says *where* to look (paths relative to the
/// store, or nil for "anywhere"); the store then compares file identities and reloads what really
/// changed, so a spurious or coalesced event costs a few `stat`s and nothing else.
///
/// Watched: the store's folder, each collection's folder and month folders, and `.folio/` (for
/// the journal, where other processes' commits appear). Not watched: `.folio/tmp/` and `outbox/`
/// (the outbox changes only through the journal).
final class FolderWatcher: @unchecked Sendable {
    /// Whether every change is reported by path. When false (Apple platforms: a directory source
    /// does not see a file edited in place), the store also polls the files it has read.
    let isComplete: Bool
    private let queue = DispatchQueue(label: "folio.watcher")
    private let root: String
    private let onChange: @Sendable (Set<String>?) -> Void
    private let onProblem: @Sendable (String) -> Void
    // Everything below is touched only on `queue`.
    private var pending: Set<String> = []
    private var pendingEverything = false
    private var flushScheduled = false
    #if os(Linux) || os(Android)
    private var descriptor: Int32 = -1
    private var source: (any DispatchSourceRead)?
    private var folders: [Int32: String] = [:]
    #elseif canImport(Darwin)
    private var sources: [String: any DispatchSourceFileSystemObject] = [:]
    #endif

    /// Starts watching.
    /// - Parameters:
    ///   - root: The store's folder (an absolute path).
    ///   - onChange: Called on a private queue, at most every 20 ms, with the paths that changed
    ///     (relative to `root`), or nil when the watcher lost track (an overflow) and everything
    ///     must be checked.
    ///   - onProblem: Called with what went wrong when a folder cannot be watched (changes there
    ///     are then noticed only by polling), or when no watcher can start at all (the per-user
    ///     limit of inotify instances, `fs.inotify.max_user_instances`, for example).
    /// - Returns: nil where the platform has no watcher, or it cannot start; the store then only polls.
    init?(root: String, onChange: @escaping @Sendable (Set<String>?) -> Void,
          onProblem: @escaping @Sendable (String) -> Void) {
        self.root = root
        self.onChange = onChange
        self.onProblem = onProblem
        #if os(Linux) || os(Android)
        isComplete = true
        let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else {
            onProblem("no folder watcher: inotify_init1 failed (\(Self.describe(errno)))")
            return nil
        }
        descriptor = fd
        let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        source.setEventHandler { [weak self] in self?.readEvents() }
        source.setCancelHandler { _ = close(fd) }
        self.source = source
        queue.sync { addFolder("", depth: 0, reportContents: false) }
        source.resume()
        #elseif canImport(Darwin)
        isComplete = false
        queue.sync {
            addFolder("", depth: 0)
            addFolder(".folio", depth: 9)
            addFile(".folio/journal")
        }
        #else
        return nil
        #endif
    }

    /// Stops watching. No call to `onChange` starts after this returns.
    func stop() {
        queue.sync {
            #if os(Linux) || os(Android)
            source?.cancel()
            source = nil
            #elseif canImport(Darwin)
            for source in sources.values { source.cancel() }
            sources = [:]
            #endif
            pending = []
            pendingEverything = false
        }
    }

    /// Folders watched below `path` ("" is the store's folder): collections (depth 1) and their
    /// month folders (depth 2), and `.folio` itself for the journal.
    private static func watches(_ name: String, at depth: Int) -> Bool {
        if depth == 1 { return name == ".folio" || (!name.hasPrefix(".") && name != "outbox") }
        return depth == 2 && !name.hasPrefix(".")
    }

    private static func describe(_ code: Int32) -> String {
        "errno \(code): " + String(cString: strerror(code))
    }

    private static func join(_ folder: String, _ name: String) -> String {
        folder.isEmpty ? name : folder + "/" + name
    }

    // MARK: Reporting

    private func note(_ path: String?) {
        if let path { pending.insert(path) } else { pendingEverything = true }
        guard !flushScheduled else { return }
        flushScheduled = true
        queue.asyncAfter(deadline: .now() + .milliseconds(20)) { [weak self] in self?.flush() }
    }

    private func flush() {
        flushScheduled = false
        let paths: Set<String>? = pendingEverything ? nil : pending
        pending = []
        pendingEverything = false
        onChange(paths)
    }

    #if os(Linux) || os(Android)
    // MARK: inotify

    private static let folderMask = UInt32(IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_CLOSE_WRITE | IN_MODIFY
                                           | IN_DELETE_SELF | IN_ONLYDIR)

    private func addFolder(_ folder: String, depth: Int, reportContents: Bool) {
        let wd = inotify_add_watch(descriptor, root + (folder.isEmpty ? "" : "/" + folder), Self.folderMask)
        guard wd >= 0 else {
            let code = errno
            // A folder removed meanwhile needs no watch.
            if code != ENOENT { onProblem("cannot watch \(folder.isEmpty ? "the store's folder" : folder): inotify_add_watch failed (\(Self.describe(code)))") }
            return
        }
        folders[wd] = folder
        guard let directory = opendir(root + (folder.isEmpty ? "" : "/" + folder)) else { return }
        defer { closedir(directory) }
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard name != "." && name != ".." else { continue }
            let path = Self.join(folder, name)
            if entry.pointee.d_type == UInt8(DT_DIR) {
                if Self.watches(name, at: depth + 1) && folder != ".folio" {
                    addFolder(path, depth: depth + 1, reportContents: reportContents)
                }
            } else if reportContents {
                note(path)
            }
        }
    }

    private func readEvents() {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { return }
            var offset = 0
            while offset + 16 <= count {
                let (wd, mask, length) = buffer.withUnsafeBytes { bytes in
                    (bytes.loadUnaligned(fromByteOffset: offset, as: Int32.self),
                     bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self),
                     Int(bytes.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self)))
                }
                let nameBytes = buffer[(offset + 16)..<min(count, offset + 16 + length)]
                let name = String(decoding: nameBytes.prefix { $0 != 0 }, as: UTF8.self)
                offset += 16 + length
                handle(wd: wd, mask: mask, name: name)
            }
        }
    }

    private func handle(wd: Int32, mask: UInt32, name: String) {
        if mask & UInt32(IN_Q_OVERFLOW) != 0 { note(nil); return }
        if mask & UInt32(IN_IGNORED) != 0 { folders[wd] = nil; return }
        guard let folder = folders[wd], !name.isEmpty else { return }
        let path = Self.join(folder, name)
        if mask & UInt32(IN_ISDIR) != 0 {
            let depth = folder.isEmpty ? 1 : folder.split(separator: "/").count + 1
            if mask & UInt32(IN_CREATE | IN_MOVED_TO) != 0, folder != ".folio", Self.watches(name, at: depth) {
                // Files may have landed in it before the watch: report them too.
                addFolder(path, depth: depth, reportContents: true)
            }
            if mask & UInt32(IN_DELETE | IN_MOVED_FROM) != 0 { note(path) }
            return
        }
        if folder == ".folio" {
            if name == "journal" { note(path) }
            return
        }
        // A data file counts when it is complete: closed after writing, renamed into place, or
        // gone. (IN_MODIFY alone would show an editor's half-written file.)
        if mask & UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE) != 0 { note(path) }
    }
    #elseif canImport(Darwin)
    // MARK: Dispatch sources

    private func addFolder(_ folder: String, depth: Int) {
        addSource(folder, mask: [.write, .delete, .rename]) { [weak self] in self?.folderChanged(folder, depth: depth) }
        guard depth < 2, let directory = opendir(root + (folder.isEmpty ? "" : "/" + folder)) else { return }
        defer { closedir(directory) }
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard name != "." && name != "..", entry.pointee.d_type == UInt8(DT_DIR), name != ".folio",
                  Self.watches(name, at: depth + 1) else { continue }
            addFolder(Self.join(folder, name), depth: depth + 1)
        }
    }

    private func addFile(_ path: String) {
        addSource(path, mask: [.write, .extend, .delete, .rename]) { [weak self] in self?.note(path) }
    }

    private func addSource(_ path: String, mask: DispatchSource.FileSystemEvent, handler: @escaping @Sendable () -> Void) {
        guard sources[path] == nil else { return }
        let fd = open(root + (path.isEmpty ? "" : "/" + path), O_EVTONLY)
        guard fd >= 0 else { return }
        let source = DispatchSource.makeFileSystemObjectSource(fileDescriptor: fd, eventMask: mask, queue: queue)
        source.setEventHandler(handler: handler)
        source.setCancelHandler { _ = Darwin.close(fd) }
        sources[path] = source
        source.resume()
    }

    /// A folder's entries changed: watch new subfolders, and have the store check everything it
    /// read (a directory source does not say which entry).
    private func folderChanged(_ folder: String, depth: Int) {
        if folder != ".folio" && depth < 2 { addFolder(folder, depth: depth) }
        note(nil)
    }
    #endif
}

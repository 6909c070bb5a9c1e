// Linux (and Android): how FolderWatcher watches, with inotify. One inotify descriptor, read
// through a dispatch read source on the watcher's queue; a watch per watched folder. Every change
// is reported by path (`reportsEveryChange`), so the store does not poll.
// Built and tested by this project's CI (Linux x86_64); FolderWatcher+Darwin.swift is the Apple side.
#if os(Linux) || os(Android)
internal import Dispatch
#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#endif

extension FolderWatcher {
    /// The inotify descriptor, its read source, and the folder of each watch.
    struct Watches {
        var descriptor: Int32 = -1
        var source: (any DispatchSourceRead)?
        var folders: [Int32: String] = [:]
    }

    static var reportsEveryChange: Bool { true }

    private static let folderMask = UInt32(
        IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_CLOSE_WRITE | IN_MODIFY
            | IN_DELETE_SELF | IN_ONLYDIR)

    /// Starts inotify and watches the folders; false (told to `onProblem`) when inotify cannot start.
    func startWatching() -> Bool {
        let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else {
            onProblem("no folder watcher: inotify_init1 failed (\(Self.describe(errno)))")
            return false
        }
        watches.descriptor = fd
        let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        source.setEventHandler { [weak self] in self?.readEvents() }
        source.setCancelHandler { _ = close(fd) }
        watches.source = source
        queue.sync { addFolder("", depth: 0, reportContents: false) }
        source.resume()
        return true
    }

    /// Cancels the read source, which closes the descriptor. On `queue`.
    func stopWatching() {
        watches.source?.cancel()
        watches.source = nil
    }

    private static func describe(_ code: Int32) -> String {
        "errno \(code): " + String(cString: strerror(code))
    }

    private func addFolder(_ folder: String, depth: Int, reportContents: Bool) {
        let wd = inotify_add_watch(watches.descriptor, absolute(folder), Self.folderMask)
        guard wd >= 0 else {
            let code = errno
            // A folder removed meanwhile needs no watch.
            if code != ENOENT { onProblem("cannot watch \(folder.isEmpty ? "the store's folder" : folder): inotify_add_watch failed (\(Self.describe(code)))") }
            return
        }
        watches.folders[wd] = folder
        guard let directory = opendir(absolute(folder)) else { return }
        defer { closedir(directory) }
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard name != "." && name != ".." else { continue }
            let path = Self.join(folder, name)
            if entry.pointee.d_type == UInt8(DT_DIR) {
                if Self.isWatched(name, atDepth: depth + 1) && folder != ".folio" {
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
            let count = buffer.withUnsafeMutableBytes { read(watches.descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { return }
            var offset = 0
            while offset + 16 <= count {
                let (wd, mask, length) = buffer.withUnsafeBytes { bytes in
                    (
                        bytes.loadUnaligned(fromByteOffset: offset, as: Int32.self),
                        bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self),
                        Int(bytes.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
                    )
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
        if mask & UInt32(IN_IGNORED) != 0 { watches.folders[wd] = nil; return }
        guard let folder = watches.folders[wd], !name.isEmpty else { return }
        let path = Self.join(folder, name)
        if mask & UInt32(IN_ISDIR) != 0 {
            let depth = folder.isEmpty ? 1 : folder.split(separator: "/").count + 1
            if mask & UInt32(IN_CREATE | IN_MOVED_TO) != 0, folder != ".folio", Self.isWatched(name, atDepth: depth) {
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
}
#endif

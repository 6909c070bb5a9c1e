// Apple platforms: how FolderWatcher watches, with dispatch sources (kqueue's EVFILT_VNODE). A
// file-system object source per watched folder (opened with O_EVTONLY) reports that its entries
// changed, not which; one more on `.folio/journal` reports other processes' commits. A file edited
// in place changes no folder entry, so `reportsEveryChange` is false and the store also polls.
// NOT compiled or tested by this project's CI (Linux only): checked by eye against Apple's API.
#if canImport(Darwin)
internal import Darwin
internal import Dispatch

extension FolderWatcher {
    /// One source per watched path (relative to the store's folder).
    struct Watches {
        var sources: [String: any DispatchSourceFileSystemObject] = [:]
    }

    static var reportsEveryChange: Bool { false }

    /// Watches the store's folder, its collections and months, `.folio/` and the journal. Always
    /// true: a path that cannot be opened is left to polling.
    func startWatching() -> Bool {
        queue.sync {
            addFolder("", depth: 0)
            addFolder(".folio", depth: 9)
            addFile(".folio/journal")
        }
        return true
    }

    /// Cancels every source, which closes its descriptor. On `queue`.
    func stopWatching() {
        for source in watches.sources.values { source.cancel() }
        watches.sources = [:]
    }

    private func addFolder(_ folder: String, depth: Int) {
        addSource(folder, mask: [.write, .delete, .rename]) { [weak self] in self?.folderChanged(folder, depth: depth) }
        guard depth < 2, let directory = opendir(absolute(folder)) else { return }
        defer { closedir(directory) }
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard name != "." && name != "..", entry.pointee.d_type == UInt8(DT_DIR), name != ".folio",
                Self.isWatched(name, atDepth: depth + 1)
            else { continue }
            addFolder(Self.join(folder, name), depth: depth + 1)
        }
    }

    private func addFile(_ path: String) {
        addSource(path, mask: [.write, .extend, .delete, .rename]) { [weak self] in self?.note(path) }
    }

    private func addSource(_ path: String, mask: DispatchSource.FileSystemEvent, handler: @escaping @Sendable () -> Void) {
        guard watches.sources[path] == nil else { return }
        let fd = Darwin.open(absolute(path), O_EVTONLY)
        guard fd >= 0 else { return }
        let source = DispatchSource.makeFileSystemObjectSource(fileDescriptor: fd, eventMask: mask, queue: queue)
        source.setEventHandler(handler: handler)
        source.setCancelHandler { _ = Darwin.close(fd) }
        watches.sources[path] = source
        source.resume()
    }

    /// A folder's entries changed: watch new subfolders, and have the store check everything it
    /// read (a directory source does not say which entry).
    private func folderChanged(_ folder: String, depth: Int) {
        if folder != ".folio" && depth < 2 { addFolder(folder, depth: depth) }
        note(nil)
    }
}
#endif

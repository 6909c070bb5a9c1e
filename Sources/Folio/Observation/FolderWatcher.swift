internal import Dispatch

/// Tells the store, soon after it happens, that files in its folder changed. It only says *where*
/// to look (paths relative to the store, or nil for "anywhere"); the store then compares file
/// identities and reloads what really changed, so a spurious or coalesced event costs a few
/// `stat`s and nothing else.
///
/// Watched: the store's folder, each collection's folder and month folders, and `.folio/` (for
/// the journal, where other processes' commits appear). Not watched: `.folio/tmp/` and `outbox/`
/// (the outbox changes only through the journal).
///
/// This file is the same on every platform: the reporting, and which folders are watched. How
/// they are watched is in one file per platform, compiled only there, each providing `Watches`,
/// `reportsEveryChange`, `startWatching()` and `stopWatching()`: FolderWatcher+Linux.swift
/// (inotify; built and tested in CI) and FolderWatcher+Darwin.swift (dispatch sources on Apple
/// platforms; not compiled by this project's CI).
final class FolderWatcher: @unchecked Sendable {
    /// Whether every change is reported by path. When false (Apple platforms: a directory source
    /// does not see a file edited in place), the store also polls the files it has read.
    let isComplete: Bool
    let queue = DispatchQueue(label: "folio.watcher")
    let root: String
    private let onChange: @Sendable (Set<String>?) -> Void
    let onProblem: @Sendable (String) -> Void
    // Everything below is touched only on `queue` (and by `startWatching()` before it returns).
    private var pending: Set<String> = []
    private var pendingEverything = false
    private var flushScheduled = false
    /// The platform's watches.
    var watches = Watches()

    /// Starts watching.
    /// - Parameters:
    ///   - root: The store's folder (an absolute path).
    ///   - onChange: Called on a private queue, at most every 20 ms, with the paths that changed
    ///     (relative to `root`), or nil when the watcher lost track (an overflow) and everything
    ///     must be checked.
    ///   - onProblem: Called with what went wrong when a folder cannot be watched (changes there
    ///     are then noticed only by polling), or when no watcher can start at all (the per-user
    ///     limit of inotify instances, `fs.inotify.max_user_instances`, for example).
    /// - Returns: nil when the watcher cannot start; the store then only polls.
    init?(
        root: String, onChange: @escaping @Sendable (Set<String>?) -> Void,
        onProblem: @escaping @Sendable (String) -> Void
    ) {
        self.root = root
        self.onChange = onChange
        self.onProblem = onProblem
        isComplete = Self.reportsEveryChange
        guard startWatching() else { return nil }
    }

    /// Stops watching. No call to `onChange` starts after this returns.
    func stop() {
        queue.sync {
            stopWatching()
            pending = []
            pendingEverything = false
        }
    }

    /// Folders watched below `path` ("" is the store's folder): collections (depth 1) and their
    /// month folders (depth 2), and `.folio` itself for the journal.
    static func isWatched(_ name: String, atDepth depth: Int) -> Bool {
        if depth == 1 { return name == ".folio" || (!name.hasPrefix(".") && name != "outbox") }
        return depth == 2 && !name.hasPrefix(".")
    }

    static func join(_ folder: String, _ name: String) -> String {
        folder.isEmpty ? name : folder + "/" + name
    }

    /// The absolute path of `relative` ("" is the store's folder).
    func absolute(_ relative: String) -> String {
        root + (relative.isEmpty ? "" : "/" + relative)
    }

    // MARK: Reporting

    /// Notes a change at `path` (nil: anywhere), reported at the next flush, 20 ms from the first
    /// note. On `queue`.
    func note(_ path: String?) {
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
}

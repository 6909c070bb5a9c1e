/// How far a long maintenance operation (``Store/verify(at:progress:)``,
/// ``Store/recover(at:progress:)``, ``Store/backup(to:progress:)``,
/// ``Store/snapshot(to:progress:)``, ``Migrator/migrate(at:progress:)``,
/// ``Migrator/dryRun(at:progress:)``) has come.
///
/// An operation reports each of its phases from `completed == 0` up to `completed == total`;
/// within a phase `completed` never decreases and never exceeds `total`, and a phase that ends
/// without an error ends with `completed == total`. Every phase counts files.
public struct FolioProgress: Sendable, Equatable {
    /// What an operation is doing. New phases may be added: do not switch over them exhaustively.
    public struct Phase: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// A short name, such as `"checking"`.
        public let rawValue: String

        /// Makes a phase from its name.
        /// - Parameter rawValue: The phase's name.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The phase's name.
        public var description: String { rawValue }

        /// Reading and checking every file of the folder (verify, and the first pass of recover).
        public static let checking = Phase(rawValue: "checking")
        /// Reading the folder again under the writers' lock, to repair what the read finds (the
        /// second pass of recover).
        public static let repairing = Phase(rawValue: "repairing")
        /// Checking the folder again after a repair (the last pass of recover).
        public static let verifying = Phase(rawValue: "verifying")
        /// Copying files to a backup.
        public static let copying = Phase(rawValue: "copying")
        /// Linking (or copying) files into a snapshot.
        public static let linking = Phase(rawValue: "linking")
        /// Running migrations in memory: reading each partition file of the collections their
        /// steps name (a dry run does only this).
        public static let migrating = Phase(rawValue: "migrating")
        /// Writing each file a migration changes (data files, outbox commands, `folio.json`)
        /// beside the store, before its commit point: a crash until then leaves the store as it
        /// was.
        public static let staging = Phase(rawValue: "staging")
        /// Moving each staged file of a committed migration into place, and removing each file
        /// it removes: a crash from then on leaves the new store, finished by the next open.
        public static let finishing = Phase(rawValue: "finishing")
    }

    /// The phase this report is about.
    public var phase: Phase
    /// How much of the phase is done, from 0 to ``total``.
    public var completed: Int
    /// How much there is to do in the phase, in files.
    public var total: Int

    /// Makes a progress report.
    /// - Parameters:
    ///   - phase: The phase.
    ///   - completed: How much of it is done.
    ///   - total: How much there is to do.
    public init(phase: Phase, completed: Int, total: Int) {
        self.phase = phase
        self.completed = completed
        self.total = total
    }
}

/// Receives ``FolioProgress`` reports from a long operation. Called on the operation's own
/// thread, possibly thousands of times: keep it quick (a command line tool redraws its line a few
/// times a second at most).
public typealias ProgressHandler = @Sendable (FolioProgress) -> Void

/// Counts the work of one phase and reports it: monotonic, clamped to the total (a live store can
/// gain files after they were counted), and ended at the total.
final class ProgressCounter {
    let phase: FolioProgress.Phase
    let total: Int
    private let handler: ProgressHandler?
    private(set) var completed = 0

    init(_ phase: FolioProgress.Phase, total: Int, handler: ProgressHandler?) {
        self.phase = phase
        self.total = max(total, 0)
        self.handler = handler
        handler?(FolioProgress(phase: phase, completed: 0, total: self.total))
    }

    /// One more unit done.
    func advance() {
        guard let handler, completed < total else { return }
        completed += 1
        handler(FolioProgress(phase: phase, completed: completed, total: total))
    }

    /// The phase is over: reports the total if it was not reached.
    func finish() {
        guard let handler, completed < total else { return }
        completed = total
        handler(FolioProgress(phase: phase, completed: total, total: total))
    }

    /// How many files below `folder` (recursively) `fileSystem` lists, except those for which
    /// `skip` is true (a skipped folder is not entered).
    /// - Throws: ``FolioError`` naming a folder that cannot be listed (the operation would fail
    ///   on it too).
    static func countFiles(in fileSystem: FileSystem, _ folder: String = "", skip: (String) -> Bool = { _ in false }) throws(FolioError) -> Int {
        var count = 0
        for entry in try fileSystem.list(folder) {
            let path = folder.isEmpty ? entry.name : folder + "/" + entry.name
            if skip(path) { continue }
            count += entry.isDirectory ? try countFiles(in: fileSystem, path, skip: skip) : 1
        }
        return count
    }
}

extension Store {
    /// The counter of a backup's copy: the files outside `.folio/`, and the journal when it is
    /// copied too (a read-only store's backup); nil without a handler.
    func copyProgress(_ handler: ProgressHandler?, journal: Bool = false) throws(FolioError) -> ProgressCounter? {
        guard let handler else { return nil }
        var total = try ProgressCounter.countFiles(in: fileSystem) { $0 == StoreLayout.machinery }
        if journal, try fileSystem.identity(StoreLayout.journal) != nil { total += 1 }
        return ProgressCounter(.copying, total: total, handler: handler)
    }

    /// The counter of a snapshot: every file but the lock and the temp folder's; nil without a
    /// handler.
    func snapshotProgress(_ handler: ProgressHandler?) throws(FolioError) -> ProgressCounter? {
        guard let handler else { return nil }
        let total = try ProgressCounter.countFiles(in: fileSystem) { $0 == StoreLayout.lockFile || $0 == StoreLayout.tempFolder }
        return ProgressCounter(.linking, total: total, handler: handler)
    }
}

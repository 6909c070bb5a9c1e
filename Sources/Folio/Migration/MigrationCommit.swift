internal import Foundation

/// Writes a ``MigrationPlan`` so that a crash at any instant leaves the old store or the new one.
///
/// 1. **Stage**: every new file is written under `.folio/migration/staged/<its path>` and synced,
///    then the staged folders are synced. A crash here leaves the store as it was; the next open
///    deletes `.folio/migration/`.
/// 2. **Commit**: `.folio/migration/commit.json` (the list of files to move in and to remove) is
///    written by temp file, fsync and rename, and its folder synced. That rename is the commit
///    point: from here on the migration is done, whatever happens.
/// 3. **Finish**: each staged file is renamed over its target, removed files are unlinked, the
///    folders are synced, derived indexes of the collections concerned are dropped, `folio.json`
///    (staged too) is renamed last, then `commit.json` and the staging folder are removed. Every
///    step is idempotent (a staged file already moved is skipped), so every open finishes a
///    committed migration before it reads anything.
///
/// No step holds the whole migration in one journal record, so a store of any size migrates
/// with the disk space of the files that change.
enum MigrationCommit {
    static let folder = ".folio/migration"
    static let stagedFolder = ".folio/migration/staged"
    static let commitFile = ".folio/migration/commit.json"

    /// Stages, commits and finishes the plan. Only with the writers' lock held.
    /// - Parameter progress: Told of each file staged (``FolioProgress/Phase/staging``), then of
    ///   each moved into place or removed (``FolioProgress/Phase/finishing``).
    static func run(_ plan: MigrationPlan, fileSystem: FileSystem, log: LogHandler?, progress: ProgressHandler?) throws(FolioError) {
        try fileSystem.removeTree(folder)
        // Written without a sync each, then made durable with one syncfs where the platform has
        // it (a 10-year store is thousands of files); file by file elsewhere.
        let staging = ProgressCounter(.staging, total: plan.writes.count, handler: progress)
        var folders = Set<String>()
        for (path, bytes) in plan.writes {
            let staged = stagedFolder + "/" + path
            let parent = FileSystem.parent(of: staged)
            if folders.insert(parent).inserted { try fileSystem.makeDirectoryDurably(parent) }
            try fileSystem.writeWhole(staged, bytes, sync: false)
            staging.advance()
        }
        if try !fileSystem.syncFileSystem() {
            for (path, bytes) in plan.writes { try fileSystem.writeWhole(stagedFolder + "/" + path, bytes, sync: true) }
            for parent in folders { try fileSystem.syncDirectory(parent) }
        }
        staging.finish()
        let manifest: JSONValue = .object([
            "writes": .array(plan.writes.map { .string($0.path) }),
            "removes": .array(plan.removes.map(JSONValue.string)),
            "collections": .array(plan.collections.sorted().map(JSONValue.string)),
        ])
        try fileSystem.makeDirectoryDurably(folder)
        try AtomicFile(fileSystem: fileSystem).replace(commitFile, with: JSONWriter.pretty(manifest))
        try fileSystem.syncDirectory(folder)
        try finish(fileSystem, log: log, progress: progress)
    }

    /// Finishes a committed migration, or discards an uncommitted one. Every open calls it, with
    /// the writers' lock held, before reading anything.
    /// - Parameter progress: Told of each file moved into place or removed
    ///   (``FolioProgress/Phase/finishing``).
    static func finish(_ fileSystem: FileSystem, log: LogHandler?, progress: ProgressHandler? = nil) throws(FolioError) {
        guard try fileSystem.identity(folder) != nil else { return }
        guard let (bytes, _) = try fileSystem.read(commitFile) else {
            log?(
                LogMessage(
                    level: .warning, text: "discarding a migration that was interrupted before it committed; the store keeps its previous schema", path: folder)
            )
            try fileSystem.removeTree(folder)
            return
        }
        let manifest: JSONValue
        do { manifest = try JSONParser.parse(bytes) } catch {
            throw FolioError(.corruptFile, "invalid JSON: \(error.message)", path: commitFile, line: error.line, column: error.column)
        }
        func strings(_ key: String) throws(FolioError) -> [String] {
            guard case .array(let items)? = manifest[key] else {
                throw FolioError(.corruptFile, "no \"\(key)\" array in the migration's commit record", path: commitFile)
            }
            let paths = items.compactMap(\.stringValue)
            // Paths come from a file: never let one leave the store.
            guard paths.count == items.count, paths.allSatisfy({ !$0.isEmpty && !$0.hasPrefix("/") && !$0.split(separator: "/").contains("..") }) else {
                throw FolioError(.corruptFile, "\"\(key)\" holds an invalid path", path: commitFile)
            }
            return paths
        }
        let writes = try strings("writes"), removes = try strings("removes"), collections = try strings("collections")
        log?(LogMessage(level: .info, text: "finishing a committed migration: \(writes.count) file(s) to move in, \(removes.count) to remove", path: folder))
        let finishing = ProgressCounter(.finishing, total: writes.count + removes.count, handler: progress)
        var touchedFolders = Set<String>()
        for path in writes where path != StoreLayout.marker {
            try moveIn(path, fileSystem: fileSystem)
            touchedFolders.insert(FileSystem.parent(of: path))
            finishing.advance()
        }
        for path in removes {
            try fileSystem.unlink(path)
            touchedFolders.insert(FileSystem.parent(of: path))
            finishing.advance()
        }
        if try !fileSystem.syncFileSystem() {
            for parent in touchedFolders.sorted(by: >) where try fileSystem.identity(parent) != nil { try fileSystem.syncDirectory(parent) }
        }
        try removeEmptyFolders(touchedFolders, fileSystem: fileSystem)
        for collection in collections {
            do { try Names.validateCollection(collection) } catch { continue }
            try fileSystem.unlink(IndexFile.path(collection))
            try fileSystem.unlink(FieldIndexFile.path(collection))
        }
        // The files were rewritten outside any checkpoint: the next open makes the log anew.
        try fileSystem.unlink(WrittenLog.path)
        if writes.contains(StoreLayout.marker) {
            try moveIn(StoreLayout.marker, fileSystem: fileSystem)
            try fileSystem.syncDirectory("")
            finishing.advance()
        }
        try fileSystem.unlink(commitFile)
        try fileSystem.syncDirectory(folder)
        try fileSystem.removeTree(folder)
        finishing.finish()
    }

    /// Renames a staged file over its target, unless that was done before a crash.
    private static func moveIn(_ path: String, fileSystem: FileSystem) throws(FolioError) {
        let staged = stagedFolder + "/" + path
        guard try fileSystem.identity(staged) != nil else { return }
        try fileSystem.makeDirectoryDurably(FileSystem.parent(of: path))
        // Kept as Folio's version first: a migrated file is Folio's write, not a hand edit.
        if path != StoreLayout.marker, let (bytes, _) = try fileSystem.read(staged) {
            try KeptVersions(fileSystem: fileSystem).keep(bytes, of: path, revision: PartitionFile.namedRevision(bytes, path: path))
        }
        try fileSystem.rename(staged, to: path)
    }

    /// Month and collection folders left empty by removals (a day collection now by month).
    private static func removeEmptyFolders(_ folders: Set<String>, fileSystem: FileSystem) throws(FolioError) {
        var candidates = folders
        while let deepest = candidates.max(by: { $0.count < $1.count }), !deepest.isEmpty {
            candidates.remove(deepest)
            guard !deepest.hasPrefix("."), try fileSystem.identity(deepest)?.isDirectory == true,
                try fileSystem.list(deepest).isEmpty
            else { continue }
            let code = Platform.removeDirectory(fileSystem.absolute(deepest))
            if code != 0 && !Platform.isNotFound(code) { throw .system("rmdir", path: deepest, errno: code) }
            let parent = FileSystem.parent(of: deepest)
            try fileSystem.syncDirectory(parent)
            candidates.insert(parent)
        }
    }
}

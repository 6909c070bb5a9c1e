import Foundation

/// Opening a store without writing to its folder.
extension Store {
    /// Opens the store read-only: nothing is created or written (no lock file, no temp folder, no
    /// checkpoint, no journal header); the journal's committed transactions are applied in memory,
    /// so reads see everything committed. While the store is open, other processes may write:
    /// reads take the readers' shared lock when the lock file exists, as any reader does.
    static func openReadOnly(
        _ url: URL, configuration: Configuration, fileSystem: FileSystem,
        because reason: String
    ) async throws -> Store {
        let lock = FileLock(readingOnly: fileSystem)
        try await lock.acquire(exclusive: false)
        let engine: StoreEngine
        do {
            try checkSchemaReadOnly(fileSystem, configuration: configuration)
            engine = try loadReadOnly(fileSystem, log: configuration.logHandler, cacheBudget: configuration.partitionCacheBudget)
        } catch {
            lock.close()
            throw error
        }
        lock.release(exclusive: false)
        return Store(url: url, configuration: configuration, fileSystem: fileSystem, lock: lock, engine: engine, readOnlyReason: reason)
    }

    private static func loadReadOnly(_ fileSystem: FileSystem, log: LogHandler?, cacheBudget: Int) throws(FolioError) -> StoreEngine {
        let storeID = try Marker.ensure(in: fileSystem, create: false)
        let engine = try StoreEngine(fileSystem: fileSystem, log: log, readOnly: true, cacheBudget: cacheBudget)
        engine.use(StoreSettings(storeID: storeID))
        // A copy of a live folder whose files do not belong with its journal is refused here too.
        _ = try engine.checkOrigin()
        return engine
    }

    /// Whether the store was opened read-only (by ``Configuration/readOnly``, or because its
    /// folder cannot be written).
    public nonisolated var isReadOnly: Bool { readOnlyReason != nil }

    /// Throws ``FolioError/Code/readOnly`` when the store cannot write.
    func refuseIfReadOnly() throws(FolioError) {
        guard let readOnlyReason else { return }
        throw FolioError(.readOnly, "the store at \(url.path) is open read-only (\(readOnlyReason)): nothing was written")
    }
}

extension Store {
    /// Creates what a writer needs (`.folio/tmp/`, the lock file) and opens the lock.
    static func writersLock(_ fileSystem: FileSystem) throws(FolioError) -> FileLock {
        try fileSystem.makeDirectoryDurably(StoreLayout.tempFolder)
        return try FileLock(fileSystem: fileSystem)
    }

    /// Why a failure means the folder cannot be written (a read-only mount, no permission), or nil.
    static func notWritableReason(_ error: FolioError) -> String? {
        guard let code = error.systemError, Platform.isNotWritable(code) else { return nil }
        return "its folder cannot be written (\(error.path ?? "."): \(error.message))"
    }
}

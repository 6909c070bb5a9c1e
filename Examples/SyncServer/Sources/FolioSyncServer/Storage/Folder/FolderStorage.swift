import Folio
import Foundation

/// The server's data in Folio folders, one store per owner: the data folder itself when the
/// server has one token or none, `<data folder>/<owner>/` when a tokens file names owners.
///
/// Stores are opened on an owner's first request and stay open until ``close()``; each forgets
/// its expired idempotency records when it opens.
final class FolderStorage: SyncStorage {
    /// How the owners map to folders.
    enum Layout: Sendable {
        /// One store, the data folder, for ``Owner/shared``.
        case single
        /// One store per owner under the data folder.
        case perOwner
    }

    private let stores: Stores

    /// Opens the storage; in the single layout, opens the store now, so a bad folder fails the start.
    /// - Parameters:
    ///   - folder: The data folder, created if missing.
    ///   - layout: Whether owners have folders of their own.
    ///   - lastExpiredDay: Idempotency records of this UTC day and earlier are forgotten as each store opens.
    /// - Throws: A `FolioError` for a folder that cannot be opened, ``StorageError`` for a
    ///   single-owner store given as a folder of owners.
    static func open(_ folder: URL, layout: Layout, lastExpiredDay: String) async throws -> FolderStorage {
        let storage = FolderStorage(stores: Stores(folder: folder, layout: layout, lastExpiredDay: lastExpiredDay))
        switch layout {
        case .single:
            _ = try await storage.stores.database(for: .shared)
        case .perOwner:
            if FileManager.default.fileExists(atPath: folder.appendingPathComponent("folio.json").path) {
                throw StorageError(
                    "\(folder.path) is the store of a server with one token; with a tokens file, --data names a folder of owners' stores (give another folder)")
            }
        }
        return storage
    }

    private init(stores: Stores) {
        self.stores = stores
    }

    func apply(_ pushes: [Result<Push, RequestError>], for owner: Owner, now: Date) async throws -> [APIResponse] {
        try await stores.database(for: owner).apply(pushes, now: now)
    }

    func entity(_ kind: CollectionKind, id: String, for owner: Owner) async throws -> APIResponse {
        try await stores.database(for: owner).entity(kind, id: id)
    }

    func partition(_ kind: CollectionKind, key: String, for owner: Owner) async throws -> APIResponse {
        try await stores.database(for: owner).partition(kind, key: key)
    }

    func changes(_ kind: CollectionKind, after cursor: Int64, pageSize: Int, for owner: Owner) async throws -> APIResponse {
        try await stores.database(for: owner).changes(kind, after: cursor, pageSize: pageSize)
    }

    func forgetIdempotencyRecords(through lastExpiredDay: String) async throws -> Int {
        await stores.setLastExpiredDay(lastExpiredDay)
        var forgotten = 0
        for database in await stores.open() {
            forgotten += try await database.forgetIdempotencyRecords(through: lastExpiredDay)
        }
        return forgotten
    }

    func checkReady() async throws {
        for database in await stores.open() { try await database.store.write { _ in } }
    }

    func close() async throws {
        try await stores.closeAll()
    }

    /// The open stores, by owner; opens each once, even when two requests of a new owner race.
    private actor Stores {
        let folder: URL
        let layout: Layout
        var lastExpiredDay: String
        private var opened: [Owner: Task<FolderDatabase, any Error>] = [:]
        private var closed = false

        init(folder: URL, layout: Layout, lastExpiredDay: String) {
            self.folder = folder
            self.layout = layout
            self.lastExpiredDay = lastExpiredDay
        }

        func setLastExpiredDay(_ day: String) { lastExpiredDay = day }

        func database(for owner: Owner) async throws -> FolderDatabase {
            guard !closed else { throw StorageError("the server is stopping") }
            if let opening = opened[owner] { return try await opening.value }
            let url = layout == .single ? folder : folder.appendingPathComponent(owner.name, isDirectory: true)
            guard layout == .perOwner || owner == .shared else { throw StorageError("this server has no owner \(owner)") }
            let expired = lastExpiredDay
            let opening = Task {
                let database = FolderDatabase(store: try await Store.open(at: url))
                do {
                    _ = try await database.forgetIdempotencyRecords(through: expired)
                } catch {
                    try await database.store.close()
                    throw error
                }
                return database
            }
            opened[owner] = opening
            do {
                return try await opening.value
            } catch {
                opened[owner] = nil   // a later request tries again
                throw error
            }
        }

        /// The stores opened successfully so far.
        func open() async -> [FolderDatabase] {
            var databases: [FolderDatabase] = []
            for task in opened.values {
                if case .success(let database) = await task.result { databases.append(database) }
            }
            return databases
        }

        func closeAll() async throws {
            closed = true
            var firstError: (any Error)?
            for task in opened.values {
                guard case .success(let database) = await task.result else { continue }
                do { try await database.store.close() } catch { firstError = firstError ?? error }
            }
            opened = [:]
            if let firstError { throw firstError }
        }
    }
}

/// A storage failure that is not the storage's own error: a misconfiguration, or stored data
/// that cannot be read back.
struct StorageError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

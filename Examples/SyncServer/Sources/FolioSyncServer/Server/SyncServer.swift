import Folio
public import Foundation
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle

/// The reference sync server: PROTOCOL.md on `http://127.0.0.1:<port>/api/`, storing its data
/// in a Folio folder or in PostgreSQL.
///
/// ```swift
/// let server = try await SyncServer.start(SyncServer.Configuration(dataFolder: folder))
/// print(server.baseURL)          // http://127.0.0.1:8080/api/
/// try await server.stop()
/// ```
///
/// Every push is answered only after its transaction is durable (Folio's `Durability.full`, or
/// PostgreSQL's COMMIT): the change, its version, the statistics it changes and the remembered
/// response commit together. With PostgreSQL, any number of server processes may serve one
/// database at once.
///
/// ## Topics
/// - ``start(_:)``
/// - ``stop()``
/// - ``requestStop()``
/// - ``waitUntilStopped()``
public actor SyncServer {
    /// The port the server listens on (the one picked when configured with 0).
    public nonisolated let port: Int
    /// The protocol's base URL: `http://127.0.0.1:<port>/api/`.
    public nonisolated var baseURL: URL {
        // A literal scheme, host and number always make a valid URL.
        URL(string: "http://127.0.0.1:\(port)/api/") ?? URL(fileURLWithPath: "/")
    }

    let storage: any SyncStorage
    private let group: ServiceGroup
    private let running: Task<Void, any Error>
    private let upkeep: Task<Void, Never>
    private var closed = false

    private init(port: Int, storage: any SyncStorage, group: ServiceGroup, running: Task<Void, any Error>, upkeep: Task<Void, Never>) {
        self.port = port
        self.storage = storage
        self.group = group
        self.running = running
        self.upkeep = upkeep
    }

    /// Opens the storage (the data folder, or PostgreSQL, whose tables it creates or upgrades)
    /// and starts listening on 127.0.0.1.
    /// - Parameter configuration: The port, the storage, the tokens and the limits.
    /// - Returns: The running server, listening when this returns.
    /// - Throws: A `FolioError` if the data folder cannot be opened, a storage error if
    ///   PostgreSQL cannot be reached, or the socket error if the port cannot be bound (the
    ///   storage is closed again).
    public static func start(_ configuration: Configuration) async throws -> SyncServer {
        let logger = Self.logger()
        var tokens: [String: Owner] = [:]
        for (token, name) in configuration.ownerTokens {
            guard let owner = Owner(name) else { throw StorageError("\(name.debugDescription) cannot be an owner's name (1-64 of A-Z a-z 0-9 . _ -)") }
            tokens[token] = owner
        }
        if tokens.isEmpty, let token = configuration.token { tokens[token] = .shared }
        let storage = try await openStorage(configuration, perOwner: !configuration.ownerTokens.isEmpty, logger: logger)
        let router = APIRouter(
            storage: storage, parser: PushParser(maxEntityBytes: configuration.maxEntityBytes), tokens: tokens,
            pageSize: max(1, configuration.changesPageSize))
        let (ports, portSink) = AsyncStream<Int>.makeStream()
        let application = Application(
            responder: HTTPAdapter(router: router, maxBodyBytes: configuration.maxBodyBytes),
            configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: configuration.port), serverName: "folio-sync-server"),
            onServerRunning: { channel in
                portSink.yield(channel.localAddress?.port ?? configuration.port)
                portSink.finish()
            },
            logger: logger)
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [application],
                logger: logger))
        let running = Task {
            defer { portSink.finish() }
            try await group.run()
        }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else {
            // The group ended before listening: its error says why (a port in use…).
            let failure: any Error
            do {
                try await running.value
                failure = StartupError(description: "the server stopped before it listened on 127.0.0.1:\(configuration.port)")
            } catch {
                failure = error
            }
            try await storage.close()
            throw failure
        }
        let rememberDays = configuration.rememberKeysForDays
        let upkeep = Task { await Self.expireDaily(storage, rememberDays: rememberDays, logger: logger) }
        return SyncServer(port: port, storage: storage, group: group, running: running, upkeep: upkeep)
    }

    private static func openStorage(_ configuration: Configuration, perOwner: Bool, logger: Logger) async throws -> any SyncStorage {
        let lastExpiredDay = Self.lastExpiredDay(rememberDays: configuration.rememberKeysForDays)
        guard let settings = configuration.postgres else {
            return try await FolderStorage.open(configuration.dataFolder, layout: perOwner ? .perOwner : .single, lastExpiredDay: lastExpiredDay)
        }
        let fault = configuration.storageFault ?? ProcessInfo.processInfo.environment["FOLIO_SYNC_SERVER_FAULT"].flatMap(PostgresStorage.Fault.init(rawValue:))
        let isolation: TransactionRunner.Isolation = configuration.postgresIsolation == .serializable ? .serializable : .readCommitted
        let storage = try await PostgresStorage.open(settings, poolSize: configuration.postgresPoolSize, isolation: isolation, fault: fault, logger: logger)
        do {
            _ = try await storage.forgetIdempotencyRecords(through: lastExpiredDay)
        } catch {
            try await storage.close()
            throw error
        }
        return storage
    }

    /// The last UTC day whose remembered responses are forgotten: `rememberDays` whole days are
    /// kept before today's.
    static func lastExpiredDay(rememberDays: Int, now: Date = Date()) -> String {
        Day.utc(now.addingTimeInterval(-Double(max(1, rememberDays) + 1) * 86_400))
    }

    /// Stops listening, lets the requests in progress finish, and closes the storage.
    /// - Throws: What the HTTP server or closing the store threw.
    public func stop() async throws {
        await requestStop()
        try await waitUntilStopped()
    }

    /// Starts a graceful stop without waiting for it; ``waitUntilStopped()`` waits for its end.
    public func requestStop() async {
        await group.triggerGracefulShutdown()
    }

    /// Waits until the server stops (after ``stop()`` or ``requestStop()``), then closes the
    /// storage: HTTP first (the requests in progress finish), then the store or the connection
    /// pool. Safe to call more than once: the storage is closed once.
    /// - Throws: What the HTTP server or closing the store threw.
    public func waitUntilStopped() async throws {
        let outcome = await running.result
        upkeep.cancel()
        await upkeep.value
        if !closed {
            closed = true
            try await storage.close()
        }
        try outcome.get()
    }

    /// Forgets old idempotency records every hour until cancelled.
    private static func expireDaily(_ storage: any SyncStorage, rememberDays: Int, logger: Logger) async {
        while !Task.isCancelled {
            do {
                try await Task.sleep(for: .seconds(3600))
            } catch {
                return   // cancelled: the server is stopping
            }
            do {
                _ = try await storage.forgetIdempotencyRecords(through: lastExpiredDay(rememberDays: rememberDays))
            } catch {
                logger.error("could not forget old idempotency records: \(error)")
            }
        }
    }

    /// Logs to standard error (standard output carries only the "listening" line), at the
    /// level `LOG_LEVEL` names, `warning` by default.
    private static func logger() -> Logger {
        var logger = Logger(label: "folio-sync-server", factory: { StreamLogHandler.standardError(label: $0) })
        logger.logLevel = ProcessInfo.processInfo.environment["LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .warning
        return logger
    }
}

/// The HTTP server ended before it listened, without saying why.
struct StartupError: Error, CustomStringConvertible {
    var description: String
}

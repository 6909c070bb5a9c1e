import Folio
public import Foundation
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle

/// The reference sync server: PROTOCOL.md on `http://127.0.0.1:<port>/api/`, storing its data
/// in a Folio folder.
///
/// ```swift
/// let server = try await SyncServer.start(SyncServer.Configuration(dataFolder: folder))
/// print(server.baseURL)          // http://127.0.0.1:8080/api/
/// try await server.stop()
/// ```
///
/// Every push is answered only after its transaction is durable (Folio's `Durability.full`): the
/// change, its version, the statistics it changes and the remembered response commit together.
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

    private let database: SyncDatabase
    private let group: ServiceGroup
    private let running: Task<Void, any Error>
    private let upkeep: Task<Void, Never>
    private var closed = false

    private init(port: Int, database: SyncDatabase, group: ServiceGroup, running: Task<Void, any Error>, upkeep: Task<Void, Never>) {
        self.port = port
        self.database = database
        self.group = group
        self.running = running
        self.upkeep = upkeep
    }

    /// Opens the data folder and starts listening on 127.0.0.1.
    /// - Parameter configuration: The port, the data folder, the token and the limits.
    /// - Returns: The running server, listening when this returns.
    /// - Throws: A `FolioError` if the data folder cannot be opened, or the socket error if the
    ///   port cannot be bound (the store is closed again).
    public static func start(_ configuration: Configuration) async throws -> SyncServer {
        let logger = Self.logger()
        let store = try await Store.open(at: configuration.dataFolder)
        let database = SyncDatabase(store: store, pageSize: configuration.changesPageSize, rememberDays: configuration.rememberKeysForDays)
        do {
            try await database.expireIdempotencyRecords()
        } catch {
            try await store.close()
            throw error
        }
        let router = APIRouter(database: database, parser: PushParser(maxEntityBytes: configuration.maxEntityBytes), token: configuration.token)
        let (ports, portSink) = AsyncStream<Int>.makeStream()
        let application = Application(
            responder: HTTPAdapter(router: router, maxBodyBytes: configuration.maxBodyBytes),
            configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: configuration.port), serverName: "folio-sync-server"),
            onServerRunning: { channel in
                portSink.yield(channel.localAddress?.port ?? configuration.port)
                portSink.finish()
            },
            logger: logger)
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(
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
            try await store.close()
            throw failure
        }
        let upkeep = Task { await Self.expireDaily(database, logger: logger) }
        return SyncServer(port: port, database: database, group: group, running: running, upkeep: upkeep)
    }

    /// Stops listening, lets the requests in progress finish, and closes the store.
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
    /// store. Safe to call more than once: the store is closed once.
    /// - Throws: What the HTTP server or closing the store threw.
    public func waitUntilStopped() async throws {
        let outcome = await running.result
        upkeep.cancel()
        await upkeep.value
        if !closed {
            closed = true
            try await database.store.close()
        }
        try outcome.get()
    }

    /// Forgets old idempotency records every hour until cancelled.
    private static func expireDaily(_ database: SyncDatabase, logger: Logger) async {
        while !Task.isCancelled {
            do {
                try await Task.sleep(for: .seconds(3600))
            } catch {
                return // cancelled: the server is stopping
            }
            do {
                try await database.expireIdempotencyRecords()
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

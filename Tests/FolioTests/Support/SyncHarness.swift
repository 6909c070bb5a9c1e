@testable import Folio
import FolioTestServer
import Foundation
import Testing

/// A store, a real HTTP server on 127.0.0.1 (the test server of PROTOCOL.md) and a sync engine
/// between them, with short delays so retries happen quickly.
final class SyncHarness: @unchecked Sendable {
    let folder = TemporaryFolder()
    let server: TestServer
    let store: Store
    let engine: SyncEngine
    let log = LogRecorder()

    init(
        configure: (inout SyncEngine.Configuration) -> Void = { _ in },
        options: (inout HTTPTransport.Options) -> Void = { _ in },
        auth: (any AuthProvider)? = nil,
        server existing: TestServer? = nil
    ) async throws {
        server = try existing ?? TestServer()
        var storeConfiguration = Store.Configuration.testing()
        storeConfiguration.logHandler = log.handler
        store = try await Store.open(at: folder.url, configuration: storeConfiguration)
        var configuration = SyncEngine.Configuration.testing
        configure(&configuration)
        var transportOptions = HTTPTransport.Options()
        transportOptions.requestTimeout = .seconds(5)
        options(&transportOptions)
        let transport = HTTPTransport(baseURL: server.baseURL, auth: auth, options: transportOptions)
        engine = SyncEngine(store: store, transport: transport, configuration: configuration)
    }

    deinit { server.stop() }

    func close() async throws {
        await engine.stop()
        try await store.close()
        server.stop()
    }

    /// `drainNow()` after waiting out the head command's backoff (milliseconds in tests; at most
    /// 2 s): drainNow honours backoff, so a test that retries must wait like an app.
    @discardableResult
    func drainAfterBackoff() async throws -> DrainReport {
        if let head = try await store.pendingCommands().first,
            let next = try await store.attempts(for: head.sequence).nextAttempt, next.timeIntervalSinceNow > 0
        {
            try await Task.sleep(for: .milliseconds(Int(min(next.timeIntervalSinceNow, 2) * 1000) + 5))
        }
        return try await engine.drainNow()
    }

    /// The server's copy of an entity, decoded.
    func onServer<E: Entity>(_ type: E.Type, _ id: String) throws -> E? {
        guard let stored = server.entity(E.collection, id) else { return nil }
        return try SyncHarness.decoder.decode(E.self, from: stored.json)
    }

    /// Puts an entity on the server as another client would (a new version).
    func editOnServer<E: Entity>(_ entity: E, partition: String) throws {
        _ = server.edit(E.collection, entity.id.storageKey, json: try SyncHarness.encoder.encode(entity), partition: partition)
    }

    static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let text = try decoder.singleValueContainer().decode(String.self)
            return try Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text)
        }
        return decoder
    }()

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)))
        }
        return encoder
    }()
}

extension SyncEngine.Configuration {
    /// The TyTE collections, short retry delays, no polling.
    static var testing: SyncEngine.Configuration {
        var configuration = SyncEngine.Configuration()
        configuration.sync(Todo.self)
        configuration.sync(Tag.self)
        configuration.sync(DailyStat.self)
        configuration.initialBackoff = .milliseconds(20)
        configuration.maxBackoff = .milliseconds(100)
        configuration.pollInterval = nil
        return configuration
    }
}

/// Counts how often credentials were asked for, and hands out a token that can be rotated.
final class RotatingAuth: AuthProvider, @unchecked Sendable {
    private let lock = NSLock()
    private var token: String
    private var nextToken: String
    private(set) var refreshes = 0

    init(token: String, after refresh: String) {
        self.token = token
        self.nextToken = refresh
    }

    func authorization(refresh: Bool) async throws -> String? {
        lock.withLock {
            if refresh {
                refreshes += 1
                token = nextToken
            }
            return "Bearer " + token
        }
    }
}

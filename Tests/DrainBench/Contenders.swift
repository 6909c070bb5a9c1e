// The three contenders: raw sequential URLSession requests, and Folio's SyncEngine draining a
// store one request per command and in batches.

import Folio
import FolioCrashSupport
import FolioTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

enum Contender: CaseIterable {
    case raw
    case folio
    case folioBatched

    var letter: String {
        switch self {
        case .raw: "a"
        case .folio: "b"
        case .folioBatched: "c"
        }
    }

    var title: String {
        switch self {
        case .raw: "raw URLSession"
        case .folio: "Folio one-by-one"
        case .folioBatched: "Folio batched (\(Workload.batchSize))"
        }
    }
}

/// One timed run.
struct Measurement {
    var commands: Int
    var elapsed: Duration
    /// HTTP requests the run made (a batch counts as one).
    var requests: Int

    var commandsPerSecond: Double { Double(commands) / elapsed.seconds }
    var millisecondsPerCommand: Double { elapsed.seconds * 1000 / Double(commands) }
}

/// The longest one request may take before the run fails.
let requestTimeout: Duration = .seconds(10)

/// A: `count` sequential `PUT {base}/items/{id}` requests, each awaited before the next, with the
/// headers and body bytes Folio sends for a new item. The physical limit of sequential requests
/// to this server.
func runRaw(server: TestServer, count: Int, prefix: String) async throws -> Measurement {
    let configuration = URLSessionConfiguration.ephemeral
    configuration.timeoutIntervalForRequest = requestTimeout.seconds
    configuration.timeoutIntervalForResource = requestTimeout.seconds
    configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
    configuration.urlCache = nil
    configuration.httpCookieStorage = nil
    let session = URLSession(configuration: configuration)
    defer { session.invalidateAndCancel() }

    // Built before the clock starts, as Folio's commands are.
    let keyPrefix = UUID().uuidString + "-"
    var requests: [URLRequest] = []
    requests.reserveCapacity(count)
    for index in 0..<count {
        let item = Workload.item(index, prefix: prefix)
        var request = URLRequest(url: server.url(SyncItem.collection, item.id))
        request.httpMethod = "PUT"
        request.httpBody = try Workload.body(of: item)
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue(keyPrefix + Workload.padded(index + 1, 20), forHTTPHeaderField: "Idempotency-Key")
        request.setValue("*", forHTTPHeaderField: "If-None-Match")
        request.setValue(item.day, forHTTPHeaderField: "Folio-Partition")
        requests.append(request)
    }

    let start = ContinuousClock.now
    for (index, request) in requests.enumerated() {
        let (_, response) = try await session.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard status == 201 else { fail("raw request \(index) (\(prefix)) got status \(status), expected 201") }
    }
    return Measurement(commands: count, elapsed: ContinuousClock.now - start, requests: count)
}

/// B and C: `count` items written into a fresh store (not timed), then the time of
/// `SyncEngine.drainNow()` until the queue is empty; checked against the server afterwards.
func runFolio(server: TestServer, count: Int, prefix: String, batchSize: Int) async throws -> Measurement {
    let folder = try Scratch.folder(prefix)
    defer { Scratch.remove(folder) }
    let store = try await Store.open(at: folder, configuration: Store.Configuration(durability: .relaxed))

    // Setup, not timed: the outbox fills as an app offline would fill it, and is checkpointed
    // (as it is a second after the app's last write), so the drain starts from files.
    for first in stride(from: 0, to: count, by: Workload.transactionSize) {
        let items = (first..<min(first + Workload.transactionSize, count)).map { Workload.item($0, prefix: prefix) }
        try await store.write { tx in
            for item in items { try tx.upsert(item) }
        }
    }
    try await store.checkpoint()
    let queued = try await store.pendingCommandCount()
    guard queued == count else { fail("\(prefix): \(queued) commands queued after writing \(count) items") }

    var configuration = SyncEngine.Configuration()
    configuration.sync(SyncItem.self)
    configuration.pollInterval = nil
    var options = HTTPTransport.Options()
    options.batchSize = batchSize
    options.requestTimeout = requestTimeout
    let engine = SyncEngine(store: store, transport: HTTPTransport(baseURL: server.baseURL, options: options),
                            configuration: configuration)
    server.resetCounters()

    // A pass ends early only on a failure (which this server does not inject); a few passes are
    // allowed for a stray network error, then the run fails.
    let maxPasses = 10
    var passes = 0
    var sent = 0
    let start = ContinuousClock.now
    while true {
        let report = try await engine.drainNow()
        passes += 1
        sent += report.sent
        if report.remaining == 0 { break }
        guard passes < maxPasses else {
            fail("\(prefix): \(report.remaining) commands still queued after \(passes) drain passes; the last stopped because: \(report.stoppedBecause ?? "?")")
        }
    }
    let elapsed = ContinuousClock.now - start
    let requests = server.requestCount
    await engine.stop()

    // Verification.
    let applied = server.appliedLog
    let pending = try await store.pendingCommandCount()
    try await store.close()
    guard sent == count else { fail("\(prefix): the engine reported \(sent) commands sent, expected \(count)") }
    guard applied.count == count else { fail("\(prefix): the server applied \(applied.count) commands, expected \(count)") }
    guard applied.allSatisfy({ $0.method == "PUT" && $0.collection == SyncItem.collection && $0.id.hasPrefix(prefix + "-") }) else {
        fail("\(prefix): the server applied commands of another run")
    }
    guard Set(applied.map(\.id)).count == count else { fail("\(prefix): the server applied some items twice and others never") }
    let maxApplied = server.maxAppliedCountPerKey
    guard maxApplied == 1 else { fail("\(prefix): an idempotency key was applied \(maxApplied) times") }
    guard pending == 0 else { fail("\(prefix): \(pending) commands still pending after the drain") }
    return Measurement(commands: count, elapsed: elapsed, requests: requests)
}

/// Checks that the raw contender sends the very bytes Folio sends for the same item: writes one
/// item into a scratch store and compares its queued command's body. Returns the body size.
func checkBodyMatchesFolio() async throws -> Int {
    let folder = try Scratch.folder("body-check")
    defer { Scratch.remove(folder) }
    let store = try await Store.open(at: folder, configuration: Store.Configuration(durability: .relaxed))
    let item = Workload.item(1234, prefix: Workload.prefix(round: 1, contender: .raw))
    try await store.write { tx in try tx.upsert(item) }
    let folioBody = try await store.pendingCommands().first?.body
    try await store.close()
    let rawBody = try Workload.body(of: item)
    guard let folioBody else { fail("the body check's store queued no command") }
    guard folioBody == rawBody else {
        fail("the raw body differs from Folio's:\n  raw:   \(String(decoding: rawBody, as: UTF8.self))\n  Folio: \(String(decoding: folioBody, as: UTF8.self))")
    }
    return rawBody.count
}

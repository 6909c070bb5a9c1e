// folio-sync-child: drains a store's outbox to a server, for the sync convergence test, which
// SIGKILLs it at random instants and starts it again.
//
//   folio-sync-child DIR BASE-URL [--max-seconds 120] [--batch 1]
//
// Opens the store in DIR, drains it to BASE-URL (PROTOCOL.md) with short retry delays until the
// queue is empty (one request per command, or --batch commands per `_batch` request), prints `drained SENT FAILED` and exits 0. Exits 1 on an error it cannot retry,
// 2 on usage errors, and gives up after --max-seconds (exit 3) so a crashed test leaves nothing
// running.

import Folio
import FolioCrashSupport
import Foundation

let arguments = CommandLine.arguments
guard arguments.count >= 3, let base = URL(string: arguments[2]) else {
    FileHandle.standardError.write(Data("usage: folio-sync-child DIR BASE-URL [--max-seconds N]\n".utf8))
    exit(2)
}
var maxSeconds = 120.0
if let index = arguments.firstIndex(of: "--max-seconds"), index + 1 < arguments.count, let value = Double(arguments[index + 1]) {
    maxSeconds = value
}

var configuration = SyncEngine.Configuration()
configuration.sync(SyncItem.self)
configuration.initialBackoff = .milliseconds(2)
configuration.maxBackoff = .milliseconds(10)
configuration.maxAttempts = 1000
configuration.pollInterval = nil
var options = HTTPTransport.Options()
options.requestTimeout = .seconds(5)
if let index = arguments.firstIndex(of: "--batch"), index + 1 < arguments.count, let value = Int(arguments[index + 1]) {
    options.batchSize = value
}

do {
    let store = try await Store.open(at: URL(fileURLWithPath: arguments[1]))
    let engine = SyncEngine(store: store, transport: HTTPTransport(baseURL: base, options: options), configuration: configuration)
    let deadline = ContinuousClock.now + .seconds(maxSeconds)
    var sent = 0
    var failed = 0
    while ContinuousClock.now < deadline {
        let report = try await engine.drainNow()
        sent += report.sent
        failed += report.deadLettered
        if report.remaining == 0 && report.nextAttempt == nil { break }
        if let reason = await engine.status.blockedReason {
            FileHandle.standardError.write(Data("folio-sync-child: \(reason)\n".utf8))
            exit(1)
        }
        try await Task.sleep(for: .milliseconds(2))
    }
    guard ContinuousClock.now < deadline else { exit(3) }
    try await store.close()
    print("drained \(sent) \(failed)")
    exit(0)
} catch {
    FileHandle.standardError.write(Data("folio-sync-child: \(error)\n".utf8))
    exit(1)
}

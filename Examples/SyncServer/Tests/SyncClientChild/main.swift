import Folio
import Foundation
import TodoModels

// folio-sync-client-child: one client's sync, in a process of its own so that the two-server
// convergence test can SIGKILL it at any instant (and so that FoundationNetworking's trap on a
// response cut inside its head, swift-corelibs-foundation #5285, ends this process, not the test).
//
//   folio-sync-client-child STORE TOKEN MAX-SECONDS BASE-URL [BASE-URL …]
//
// Drains the store's outbox through the base URLs (one picked at random for every attempt, a new
// engine each time), then pulls the todo and tag feeds. Prints "synced <conflicts> <dead-lettered>"
// and exits 0; exits 1 with a line on standard error when MAX-SECONDS pass first.

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("folio-sync-client-child: \(message)\n".utf8))
    exit(1)
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count >= 4, let seconds = Int(arguments[2]) else { fail("usage: STORE TOKEN MAX-SECONDS BASE-URL [BASE-URL …]") }
let folder = URL(fileURLWithPath: arguments[0])
let token = arguments[1]
let bases = arguments[3...].compactMap(URL.init(string:))
let deadline = ContinuousClock.now + .seconds(seconds)

func engine(for store: Store) -> SyncEngine {
    var configuration = SyncEngine.Configuration()
    configuration.sync(Todo.self)
    configuration.sync(Tag.self)
    configuration.initialBackoff = .milliseconds(2)
    configuration.maxBackoff = .milliseconds(20)
    configuration.maxAttempts = 1000
    configuration.pollInterval = nil
    var options = HTTPTransport.Options()
    options.requestTimeout = .seconds(2)
    options.headers = ["Authorization": "Bearer \(token)"]
    return SyncEngine(
        store: store, transport: HTTPTransport(baseURL: bases.randomElement() ?? bases[0], options: options),
        configuration: configuration)
}

do {
    let store = try await Store.open(at: folder)
    var conflicts = 0, deadLettered = 0
    var drained = false
    while !drained {
        guard ContinuousClock.now < deadline else { fail("the outbox did not drain in \(seconds) s") }
        do {
            let report = try await engine(for: store).drainNow()
            conflicts += report.conflicts
            deadLettered += report.deadLettered
            drained = report.remaining == 0 && report.nextAttempt == nil
        } catch let error as FolioError where error.code == .network || error.code == .badResponse {
            // A server killed or a connection cut: another attempt, perhaps through the other server.
        }
        if !drained { try await Task.sleep(for: .milliseconds(5)) }
    }
    var pulled = false
    while !pulled {
        guard ContinuousClock.now < deadline else { fail("no pull got through in \(seconds) s") }
        do {
            let puller = engine(for: store)
            _ = try await puller.pullChanges(Todo.self)
            _ = try await puller.pullChanges(Tag.self)
            pulled = true
        } catch let error as FolioError where error.code == .network || error.code == .badResponse {
            try await Task.sleep(for: .milliseconds(5))
        }
    }
    try await store.close()
    print("synced \(conflicts) \(deadLettered)")
} catch {
    fail("\(error)")
}

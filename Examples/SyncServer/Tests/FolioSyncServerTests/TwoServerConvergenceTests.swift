import Folio
import FolioCrashSupport
@testable import FolioSyncServer
import FolioTestServer
import Foundation
import Testing

/// Stateless app servers: two `folio-sync-server` processes on one PostgreSQL database serve the
/// same clients interchangeably. Three clients (Folio stores with Folio's SyncEngine; two of them
/// one owner's devices, the third another owner's) work offline, then sync at once through either
/// server, picked at random for every attempt, each server
/// behind the fault proxy (resets, lost answers, truncated answers, stalls); server processes
/// are SIGKILLed while a client's drain is in flight, and started again.
///
/// The model, from PROTOCOL.md: every entity has one author (the client that created it), so no
/// two clients' changes meet; an acknowledged change is applied exactly once; an owner sees only
/// its own data. After a last sync of every client, every client and the server (read with each
/// owner's token) must hold exactly the last local state of each of the owner's entities
/// (no lost update, no resurrected delete), no command is dead-lettered, and the server's daily
/// statistics count exactly the todos it holds (a change applied twice, or half, would show).
/// Conflicts are counted, not refused: a create whose answer was lost meets its own first
/// application when the next edit is sent, and the client's merge settles it.
///
/// A run does a fixed minimum of work (operations, kills, faults), however long it takes. The
/// second test runs the same model against servers whose pulls forget the owner filter: it must
/// fail there.
/// `FOLIO_CONVERGENCE_SEED=N` replays a seed's operations (the timing still varies).
@Suite(.enabled(if: TestPostgres.runs, TestPostgres.notRunReason))
struct TwoServerConvergenceTests {
    static let clients = 3
    static let minimumOperations = 150
    static let minimumKills = 4
    static let minimumFaults = 15
    static let maxRounds = 40

    static var seed: UInt64 {
        ProcessInfo.processInfo.environment["FOLIO_CONVERGENCE_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 1...UInt64(UInt32.max))
    }

    @Test func theModelCatchesPullsWithoutTheOwnerFilter() async throws {
        let run = try await ConvergenceRun(seed: Self.seed, fault: "no-owner-filter")
        for _ in 1...3 {
            for client in 0..<Self.clients { try await run.offline(client: client) }
            for client in 0..<Self.clients { try await run.sync(client: client, killing: false) }
        }
        for client in 0..<Self.clients { try await run.sync(client: client, killing: false) }
        try await run.check()
        await run.tearDown()
        let mismatches = await run.summary.4
        print("two-server convergence with pulls that forget the owner: \(mismatches.count) mismatches")
        #expect(!mismatches.isEmpty, "servers whose pulls ignore the owner passed the convergence model")
    }

    @Test func clientsOfTwoServerProcessesConverge() async throws {
        let seed = Self.seed
        let run = try await ConvergenceRun(seed: seed, fault: nil)
        let start = ContinuousClock.now
        var rounds = 0
        for round in 1...Self.maxRounds {
            if round > 3, await run.minimumReached() { break }
            guard ContinuousClock.now < run.deadline else { break }
            rounds = round
            for client in 0..<Self.clients { try await run.offline(client: client) }
            // The clients sync at the same time, one of them (sometimes) with a server killed
            // under it: pulls meet pushes, and a cursor may pass a change committed late.
            let killer = await run.pickKiller()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for client in 0..<Self.clients { group.addTask { try await run.sync(client: client, killing: client == killer) } }
                try await group.waitForAll()
            }
        }
        // Twice around, one at a time: every client pulls what the others pushed last.
        for _ in 0..<2 {
            for client in 0..<Self.clients { try await run.sync(client: client, killing: false) }
        }
        try await run.check()
        await run.tearDown()
        let elapsed = Double((ContinuousClock.now - start).components.seconds)
        let (operations, kills, faults, conflicts, mismatches, resurrected) = await run.summary
        print("two-server convergence: \(Self.clients) clients, 2 server processes, \(operations) ops, \(kills) server kills, "
              + "\(faults) faults, \(conflicts) conflicts, \(mismatches.count) mismatches, \(resurrected) resurrected "
              + "(seed \(seed), \(rounds) rounds, \(Int(elapsed)) s)")
        #expect(mismatches.isEmpty, "seed \(seed): the first mismatches:\n\(mismatches.prefix(12).joined(separator: "\n"))")
        #expect(await run.minimumReached(), "the minimum of work was not reached: \(operations) ops, \(kills) kills, \(faults) faults")
    }
}

/// The server's JSON values (Folio has a type of that name too).
typealias ServerJSON = FolioSyncServer.JSONValue

/// The servers, proxies, clients and model of one run.
actor ConvergenceRun {
    /// What the model expects of one entity: its JSON object, or nil once its author deleted it.
    typealias Expected = [String: [String: ServerJSON]?]

    let folder: TemporaryFolder
    let settings: PostgresSettings
    var random: SplitMix64
    var servers: [ServerProcess?] = [nil, nil]
    var proxies: [FaultProxy?] = [nil, nil]
    var stores: [Store] = []
    /// Every entity's expected state by `collection/id`, and its author.
    var expected: Expected = [:]
    var authors: [String: Int] = [:]
    var operations = 0
    var kills = 0
    var conflicts = 0
    var resurrected = 0
    var mismatches: [String] = []
    /// Faults of proxies that were replaced (a restarted server gets a new one).
    var retiredFaults = 0
    let deadline = ContinuousClock.now + .seconds(900)
    let fault: String?
    static let tokens = ["alice-token-000000001", "bob-token-0000000002"]
    /// The owner (an index of ``tokens``) of a client's data: the last client is the second owner's.
    static func owner(of client: Int) -> Int { client == TwoServerConvergenceTests.clients - 1 ? 1 : 0 }

    var faultCount: Int { retiredFaults + proxies.compactMap { $0?.faultCount }.reduce(0, +) }

    init(seed: UInt64, fault: String?) async throws {
        folder = try TemporaryFolder()
        settings = try await TestPostgres.shared.database()
        random = SplitMix64(seed: seed)
        self.fault = fault
        try "alice \(Self.tokens[0])\nbob \(Self.tokens[1])\n".write(to: folder.sibling("tokens.txt"), atomically: true, encoding: .utf8)
        for index in 0..<2 { try await startServer(index) }
        for client in 0..<TwoServerConvergenceTests.clients {
            stores.append(try await Store.open(at: folder.sibling("client-\(client)")))
        }
    }

    func tearDown() async {
        for proxy in proxies { proxy?.stop() }
        for server in servers { await server?.stop() }
    }

    func minimumReached() -> Bool {
        operations >= TwoServerConvergenceTests.minimumOperations && kills >= TwoServerConvergenceTests.minimumKills
            && faultCount >= TwoServerConvergenceTests.minimumFaults
    }

    /// The client whose sync gets a server killed under it this round, if any.
    func pickKiller() -> Int? {
        Double.random(in: 0..<1, using: &random) < 0.7 ? Int.random(in: 0..<TwoServerConvergenceTests.clients, using: &random) : nil
    }

    var summary: (Int, Int, Int, Int, [String], Int) { (operations, kills, faultCount, conflicts, mismatches, resurrected) }

    private func startServer(_ index: Int) async throws {
        let server = try await ServerProcess(
            ["--postgres", settings.urlForTests, "--tokens", folder.sibling("tokens.txt").path, "--pool-size", "6"],
            environment: fault.map { ["FOLIO_SYNC_SERVER_FAULT": $0] } ?? [:], in: folder, name: "server-\(index)-\(kills)")
        let proxy = try FaultProxy(upstreamPort: UInt16(server.baseURL.port ?? 0), seed: random.next(), probability: 0.2)
        proxy.cutsInsideHeads = false // the clients run in this process (see FaultProxy)
        if let old = proxies[index] {
            retiredFaults += old.faultCount
            old.stop()
        }
        servers[index] = server
        proxies[index] = proxy
    }

    // MARK: Offline work

    /// At least `count` changes, each one transaction: creates, edits, moves and deletes of the
    /// client's own todos and tags.
    func offline(client: Int) async throws {
        let store = stores[client]
        for _ in 0..<Int.random(in: 4...9, using: &random) {
            let mine = authors.filter { $0.value == client && expected[$0.key] != nil && expected[$0.key]! != nil }.map(\.key).sorted()
            let roll = Int.random(in: 0..<100, using: &random)
            if roll < 30 || mine.isEmpty {
                if roll % 3 == 0 {
                    let tag = Tag(id: "c\(client)-\(UUID().uuidString.prefix(8))", name: "tag \(operations)", color: "#11AA\(String(format: "%02X", operations % 256))")
                    try await store.write { tx in try tx.upsert(tag) }
                    record(client, "tags/\(tag.id)", tag)
                } else {
                    let todo = Todo(id: UUID(), title: "todo \(operations)", date: day(), done: false, priority: Int.random(in: 0...3, using: &random))
                    try await store.write { tx in try tx.upsert(todo) }
                    record(client, "todos/\(todo.id.uuidString)", todo)
                }
            } else if roll < 80, let key = mine.randomElement(using: &random) {
                let id = String(key.split(separator: "/", maxSplits: 1)[1])
                if key.hasPrefix("tags/") {
                    guard var tag = try await store.get(Tag.self, id: id) else { return missing(client, key) }
                    tag.name = "renamed \(operations)"
                    let changed = tag
                    try await store.write { tx in try tx.upsert(changed) }
                    record(client, key, changed)
                } else {
                    guard let uuid = UUID(uuidString: id), var todo = try await store.get(Todo.self, id: uuid) else { return missing(client, key) }
                    todo.title = "edited \(operations)"
                    todo.done.toggle()
                    if Int.random(in: 0..<4, using: &random) == 0 { todo.date = day() } // a move to another day
                    let changed = todo
                    try await store.write { tx in try tx.upsert(changed) }
                    record(client, key, changed)
                }
            } else if let key = mine.randomElement(using: &random) {
                let id = String(key.split(separator: "/", maxSplits: 1)[1])
                if key.hasPrefix("tags/") {
                    try await store.write { tx in try tx.delete(Tag.self, id: id) }
                } else if let uuid = UUID(uuidString: id) {
                    try await store.write { tx in try tx.delete(Todo.self, id: uuid) }
                }
                expected[key] = .some(nil)
            }
            operations += 1
        }
    }

    private func day() -> String { "2026-11-2\(Int.random(in: 0...4, using: &random))" }

    private func record<E: Encodable>(_ client: Int, _ key: String, _ entity: E) {
        authors[key] = client
        expected[key] = .some(Self.json(entity))
    }

    private func missing(_ client: Int, _ key: String) {
        mismatches.append("client \(client) lost its own \(key) before it synced")
    }

    // MARK: Syncing

    /// Drains the client's outbox through servers picked at random (a new engine for every
    /// attempt), then pulls both feeds; `killing` SIGKILLs a server while the drain runs.
    func sync(client: Int, killing: Bool) async throws {
        let store = stores[client]
        var killer: Task<Int?, Never>?
        if killing {
            let victim = Int.random(in: 0..<2, using: &random)
            let delay = Int.random(in: 0...250, using: &random)
            let server = servers[victim]
            killer = Task {
                try? await Task.sleep(for: .milliseconds(delay))
                await server?.kill9()
                return victim
            }
        }
        var drained = false
        for _ in 0..<200 where ContinuousClock.now < deadline {
            let index = Int.random(in: 0..<2, using: &random)
            guard let proxy = proxies[index] else { continue }
            let engine = engine(for: store, client: client, through: proxy)
            let report: DrainReport
            do {
                report = try await engine.drainNow()
            } catch {
                try await Task.sleep(for: .milliseconds(5))
                continue
            }
            conflicts += report.conflicts
            if report.deadLettered > 0 { mismatches.append("client \(client): \(report.deadLettered) commands dead-lettered") }
            if report.remaining == 0 && report.nextAttempt == nil {
                drained = true
                break
            }
            if let victim = await killer?.value {
                killer = nil
                kills += 1
                try await startServer(victim)
            }
            try await Task.sleep(for: .milliseconds(5))
        }
        if let victim = await killer?.value {
            kills += 1
            try await startServer(victim)
        }
        guard drained else {
            mismatches.append("client \(client): the outbox did not drain (\(try await store.pendingCommandCount()) pending)")
            return
        }
        for _ in 0..<50 {
            guard let proxy = proxies[Int.random(in: 0..<2, using: &random)] else { continue }
            let engine = engine(for: store, client: client, through: proxy)
            do {
                _ = try await engine.pullChanges(Todo.self)
                _ = try await engine.pullChanges(Tag.self)
                return
            } catch {
                try await Task.sleep(for: .milliseconds(5))
            }
        }
        mismatches.append("client \(client): no pull got through in 50 attempts")
    }

    private func engine(for store: Store, client: Int, through proxy: FaultProxy) -> SyncEngine {
        var configuration = SyncEngine.Configuration()
        configuration.sync(Todo.self)
        configuration.sync(Tag.self)
        configuration.initialBackoff = .milliseconds(2)
        configuration.maxBackoff = .milliseconds(20)
        configuration.maxAttempts = 1000
        configuration.pollInterval = nil
        var options = HTTPTransport.Options()
        options.requestTimeout = .seconds(2)
        options.headers = ["Authorization": "Bearer \(Self.tokens[Self.owner(of: client)])"]
        return SyncEngine(store: store, transport: HTTPTransport(baseURL: proxy.baseURL, options: options), configuration: configuration)
    }

    // MARK: Checking

    /// Every client and the server against the model; the statistics against the server's todos.
    func check() async throws {
        for proxy in proxies { proxy?.probability = 0 }
        guard let server = servers.compactMap({ $0 }).first else { return }
        for owner in Self.tokens.indices {
            let onServer = try await serverEntities(server, owner: owner)
            compare("server (owner \(owner))", onServer, owner: owner)
            try await checkStatistics(server, owner: owner, todos: onServer)
        }
        for (index, store) in stores.enumerated() {
            var local: [String: [String: ServerJSON]] = [:]
            for todo in try await store.fetch(Query<Todo>(.all)) { local["todos/\(todo.id.uuidString)"] = Self.json(todo) }
            for tag in try await store.fetch(Query<Tag>(.all)) { local["tags/\(tag.id)"] = Self.json(tag) }
            compare("client \(index)", local, owner: Self.owner(of: index))
            if try await store.pendingCommandCount() != 0 { mismatches.append("client \(index) still has pending commands") }
        }
    }

    /// An owner's entities on the server, read from the feed with the owner's token.
    private func serverEntities(_ server: ServerProcess, owner: Int) async throws -> [String: [String: ServerJSON]] {
        let headers = ["Authorization": "Bearer \(Self.tokens[owner])"]
        var entities: [String: [String: ServerJSON]] = [:]
        for collection in ["todos", "tags"] {
            var cursor = ""
            for _ in 0..<10_000 {
                let page = try await server.client.send("GET", "/api/\(collection)?since=\(cursor)", headers: headers)
                let object = try #require(try JSONCoding.parse(page.body).objectValue, "\(page.text)")
                for change in object["changes"]?.arrayValue ?? [] {
                    guard let id = change.objectValue?["id"]?.stringValue else { continue }
                    entities["\(collection)/\(id)"] = change.objectValue?["entity"]?.objectValue
                }
                cursor = object["cursor"]?.stringValue ?? cursor
                if object["hasMore"]?.boolValue != true { break }
            }
        }
        return entities
    }

    /// The owner's statistics count the todos the server holds for it, each once.
    private func checkStatistics(_ server: ServerProcess, owner: Int, todos: [String: [String: ServerJSON]]) async throws {
        var byDay: [String: [Int]] = [:]
        for (key, entity) in todos where key.hasPrefix("todos/") {
            let day = entity["date"]?.stringValue ?? "?"
            var counts = byDay[day] ?? [0, 0]
            counts[0] += 1
            if entity["done"]?.boolValue == true { counts[1] += 1 }
            byDay[day] = counts
        }
        let stats = try await server.client.send("GET", "/api/dailyStats?partition=2026-11", headers: ["Authorization": "Bearer \(Self.tokens[owner])"])
        var counted: [String: [Int]] = [:]
        for item in try JSONCoding.parse(stats.body).objectValue?["entities"]?.arrayValue ?? [] {
            guard let entity = item.objectValue?["entity"]?.objectValue, let day = entity["date"]?.stringValue else { continue }
            counted[day] = [Int(entity["total"]?.integerValue ?? -1), Int(entity["completed"]?.integerValue ?? -1)]
        }
        for day in Set(byDay.keys).union(counted.keys).sorted() where byDay[day] != counted[day] {
            mismatches.append("owner \(owner)'s dailyStats \(day): \(counted[day].map { "\($0)" } ?? "none") (total, completed), "
                              + "but the server holds \(byDay[day].map { "\($0)" } ?? "no todos")")
        }
    }

    /// Compares what `who` holds with the model's entities of one owner.
    private func compare(_ who: String, _ actual: [String: [String: ServerJSON]], owner: Int) {
        let mine = expected.filter { authors[$0.key].map(Self.owner(of:)) == owner }
        for key in Set(mine.keys).union(actual.keys).sorted() {
            let want = mine[key] ?? nil
            let have = actual[key]
            guard want != have else { continue }
            if want == nil { resurrected += 1 }
            mismatches.append("\(who): \(key) is \(have.map { "\($0)" } ?? "absent"), the model says \(want.map { "\($0)" } ?? "deleted")"
                              + (want == nil && have != nil ? " (RESURRECTED)" : ""))
        }
    }

    /// An entity as the JSON object the server stores.
    static func json<E: Encodable>(_ entity: E) -> [String: ServerJSON] {
        let encoder = JSONEncoder()
        // As Folio writes dates: ISO 8601 with milliseconds (FORMAT.md).
        encoder.dateEncodingStrategy = .custom { date, encoder in
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            var container = encoder.singleValueContainer()
            try container.encode(formatter.string(from: date))
        }
        guard let data = try? encoder.encode(entity), case .object(let object)? = try? JSONCoding.parse(data) else { return [:] }
        return object
    }
}

extension FolioSyncServer.JSONValue {
    var arrayValue: [ServerJSON]? { if case .array(let items) = self { items } else { nil } }
}

import Folio
import FolioCrashSupport
@testable import FolioSyncServer
import FolioTestServer
import Foundation
import Testing
import TodoModels

/// Stateless app servers: two `folio-sync-server` processes on one PostgreSQL database serve the
/// same clients interchangeably. Three clients (Folio stores; two of them one owner's devices, the
/// third another owner's) work offline, then sync at the same time, each sync in a child process
/// (`folio-sync-client-child`, Folio's SyncEngine) that picks either server for every attempt; each
/// server is behind the fault proxy (resets, lost answers, truncated answers, stalls). Sync
/// children are SIGKILLed at random instants and run again until one completes, and server
/// processes are SIGKILLed under a sync and started again.
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
    static let minimumClientKills = 6
    static let minimumFaults = 15
    static let maxRounds = 40

    static var seed: UInt64 {
        ProcessInfo.processInfo.environment["FOLIO_CONVERGENCE_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 1...UInt64(UInt32.max))
    }

    @Test func theModelCatchesPullsWithoutTheOwnerFilter() async throws {
        let run = try await ConvergenceRun(seed: Self.seed, fault: "no-owner-filter")
        for _ in 1...3 {
            for client in 0..<Self.clients { try await run.offline(client: client) }
            for client in 0..<Self.clients { try await run.sync(client: client, killingServer: false, childKills: 0) }
        }
        for client in 0..<Self.clients { try await run.sync(client: client, killingServer: false, childKills: 0) }
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
                for client in 0..<Self.clients {
                    let childKills = await run.childKills()
                    group.addTask { try await run.sync(client: client, killingServer: client == killer, childKills: childKills) }
                }
                try await group.waitForAll()
            }
        }
        // Twice around, one at a time: every client pulls what the others pushed last.
        for _ in 0..<2 {
            for client in 0..<Self.clients { try await run.sync(client: client, killingServer: false, childKills: 0) }
        }
        try await run.check()
        await run.tearDown()
        let elapsed = Double((ContinuousClock.now - start).components.seconds)
        let (operations, kills, faults, conflicts, mismatches, resurrected) = await run.summary
        let children = await run.childCounts
        print(
            "two-server convergence: \(Self.clients) clients, 2 server processes, \(operations) ops, \(kills) server kills, "
                + "\(children.kills) client kills, \(faults) faults, \(conflicts) conflicts, \(mismatches.count) mismatches, "
                + "\(resurrected) resurrected (seed \(seed), \(rounds) rounds, \(children.traps) FoundationNetworking traps, \(Int(elapsed)) s)")
        #expect(mismatches.isEmpty, "seed \(seed): the first mismatches:\n\(mismatches.prefix(12).joined(separator: "\n"))")
        #expect(
            await run.minimumReached(),
            "the minimum of work was not reached: \(operations) ops, \(kills) server kills, \(children.kills) client kills, \(faults) faults")
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
    var syncCount = 0
    var clientKills = 0
    /// Sync children ended by FoundationNetworking's trap (see ``sync(client:killingServer:childKills:)``).
    var traps = 0
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
    }

    func tearDown() async {
        for proxy in proxies { proxy?.stop() }
        for server in servers { await server?.stop() }
    }

    func minimumReached() -> Bool {
        operations >= TwoServerConvergenceTests.minimumOperations && kills >= TwoServerConvergenceTests.minimumKills
            && clientKills >= TwoServerConvergenceTests.minimumClientKills && faultCount >= TwoServerConvergenceTests.minimumFaults
    }

    /// How many of a sync's children are SIGKILLed before one may complete.
    func childKills() -> Int { Int.random(in: 0...2, using: &random) }

    /// The client whose sync gets a server killed under it this round, if any.
    func pickKiller() -> Int? {
        Double.random(in: 0..<1, using: &random) < 0.7 ? Int.random(in: 0..<TwoServerConvergenceTests.clients, using: &random) : nil
    }

    var summary: (Int, Int, Int, Int, [String], Int) { (operations, kills, faultCount, conflicts, mismatches, resurrected) }
    var childCounts: (kills: Int, traps: Int) { (clientKills, traps) }

    private func storeURL(_ client: Int) -> URL { folder.sibling("client-\(client)") }

    private func startServer(_ index: Int) async throws {
        let server = try await ServerProcess(
            ["--postgres", settings.urlForTests, "--tokens", folder.sibling("tokens.txt").path, "--pool-size", "6"],
            environment: fault.map { ["FOLIO_SYNC_SERVER_FAULT": $0] } ?? [:], in: folder, name: "server-\(index)-\(kills)")
        let proxy = try FaultProxy(upstreamPort: UInt16(server.baseURL.port ?? 0), seed: random.next(), probability: 0.2)
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
        let store = try await Store.open(at: storeURL(client))
        do {
            try await offline(client: client, in: store)
        } catch {
            try await store.close()
            throw error
        }
        try await store.close()
    }

    private func offline(client: Int, in store: Store) async throws {
        for _ in 0..<Int.random(in: 4...9, using: &random) {
            let mine = authors.filter { $0.value == client && expected[$0.key] != nil && expected[$0.key]! != nil }.map(\.key).sorted()
            let roll = Int.random(in: 0..<100, using: &random)
            if roll < 30 || mine.isEmpty {
                if roll % 3 == 0 {
                    let tag = TodoModels.Tag(
                        id: "c\(client)-\(UUID().uuidString.prefix(8))", name: "tag \(operations)", color: "#11AA\(String(format: "%02X", operations % 256))")
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
                    guard var tag = try await store.get(TodoModels.Tag.self, id: id) else { return missing(client, key) }
                    tag.name = "renamed \(operations)"
                    let changed = tag
                    try await store.write { tx in try tx.upsert(changed) }
                    record(client, key, changed)
                } else {
                    guard let uuid = UUID(uuidString: id), var todo = try await store.get(Todo.self, id: uuid) else { return missing(client, key) }
                    todo.title = "edited \(operations)"
                    todo.done.toggle()
                    if Int.random(in: 0..<4, using: &random) == 0 { todo.date = day() }   // a move to another day
                    let changed = todo
                    try await store.write { tx in try tx.upsert(changed) }
                    record(client, key, changed)
                }
            } else if let key = mine.randomElement(using: &random) {
                let id = String(key.split(separator: "/", maxSplits: 1)[1])
                if key.hasPrefix("tags/") {
                    try await store.write { tx in try tx.delete(TodoModels.Tag.self, id: id) }
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

    /// Syncs a client in a child process (`folio-sync-client-child`): it drains the outbox through
    /// either server, picked at random for every attempt, then pulls both feeds. The first
    /// `childKills` children are SIGKILLed at random instants, and children run again until one
    /// completes; `killingServer` SIGKILLs a server meanwhile, started again when the sync ends.
    func sync(client: Int, killingServer: Bool, childKills: Int) async throws {
        var killer: Task<Int?, Never>?
        if killingServer {
            let victim = Int.random(in: 0..<2, using: &random)
            let delay = Int.random(in: 0...250, using: &random)
            let server = servers[victim]
            killer = Task {
                try? await Task.sleep(for: .milliseconds(delay))
                await server?.kill9()
                return victim
            }
        }
        syncCount += 1
        let label = "sync-c\(client)-\(syncCount)"
        var killed = 0, completed = false
        for attempt in 0..<(childKills + 8) where !completed {
            guard ContinuousClock.now < deadline else { break }
            let bases = proxies.compactMap { $0?.baseURL.absoluteString }
            let child = try ChildProcess(
                try CommandLineTests.executable(named: "folio-sync-client-child"),
                [storeURL(client).path, Self.tokens[Self.owner(of: client)], "25"] + bases,
                in: folder, name: "\(label)-\(attempt)")
            if killed < childKills {
                try await Task.sleep(for: .milliseconds(Int.random(in: 20...700, using: &random)))
                if await child.kill9() {
                    killed += 1
                    clientKills += 1
                    continue
                }
            } else if !(await child.waitForExit(seconds: 30)) {
                await child.kill9()
                mismatches.append("client \(client): a sync did not finish in 30 s: \(child.errorText.suffix(400))")
                break
            }
            // The trap is told by its message too: however the child's end is reported, a sync
            // child that stopped on FoundationNetworking's trap was ended as by a kill.
            let trap = "Transfer completed, but there's no response"
            if child.trapped || (!child.exitedCleanly && child.errorText.contains(trap)) {
                // FoundationNetworking's trap on a response cut inside its head (#5285) ends the
                // child, as a kill would; any other crash is a defect.
                if child.errorText.contains(trap) {
                    traps += 1
                } else {
                    mismatches.append("client \(client): the sync child died of a signal: \(child.errorText.suffix(400))")
                }
                continue
            }
            let words = child.outputText.split(separator: "\n").last?.split(separator: " ") ?? []
            guard child.exitedCleanly, words.count == 3, words[0] == "synced", let found = Int(words[1]), let lost = Int(words[2]) else {
                mismatches.append("client \(client): the sync failed: \(child.errorText.suffix(400))")
                break
            }
            conflicts += found
            if lost > 0 { mismatches.append("client \(client): \(lost) commands dead-lettered") }
            completed = true
        }
        if !completed, mismatches.isEmpty { mismatches.append("client \(client): no sync completed") }
        if let victim = await killer?.value {
            kills += 1
            try await startServer(victim)
        }
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
        for index in 0..<TwoServerConvergenceTests.clients {
            let store = try await Store.open(at: storeURL(index))
            var local: [String: [String: ServerJSON]] = [:]
            for todo in try await store.fetch(Query<Todo>(.all)) { local["todos/\(todo.id.uuidString)"] = Self.json(todo) }
            for tag in try await store.fetch(Query<TodoModels.Tag>(.all)) { local["tags/\(tag.id)"] = Self.json(tag) }
            let pending = try await store.pendingCommandCount()
            try await store.close()
            compare("client \(index)", local, owner: Self.owner(of: index))
            if pending != 0 { mismatches.append("client \(index) still has \(pending) pending commands") }
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
            mismatches.append(
                "owner \(owner)'s dailyStats \(day): \(counted[day].map { "\($0)" } ?? "none") (total, completed), "
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
            mismatches.append(
                "\(who): \(key) is \(have.map { "\($0)" } ?? "absent"), the model says \(want.map { "\($0)" } ?? "deleted")"
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

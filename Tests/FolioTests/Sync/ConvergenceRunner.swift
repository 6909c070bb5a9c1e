import FolioCrashSupport
import FolioTestServer
import Foundation

/// Drives the multi-client convergence test: client processes (`folio-client-child`), each with
/// its own store, the test server behind the fault proxy, and the model, compared after every sync.
final class ConvergenceRunner {
    struct Counts {
        var operations = 0
        var kills = 0
        /// Children that died of a signal the test did not send (FoundationNetworking's trap on a
        /// response cut inside its head, swift-corelibs-foundation #5285), restarted like a kill.
        var traps = 0
        var mismatches = 0
        var resurrected = 0
        var interrupted = 0
        /// Offline operations applied by an app process while a sync of the same store ran.
        var concurrent = 0
    }

    /// What a child printed after a complete sync.
    struct ClientState: Decodable {
        var todos: [String: [String: ModelValue?]]
        var tags: [String: [String: ModelValue?]]
        var pending: Int
        var failed: [String]

        var collections: ModelCollections {
            ["todos": todos.mapValues { $0.compactMapValues { $0 } }, "tags": tags.mapValues { $0.compactMapValues { $0 } }]
        }
    }

    let clientCount: Int
    let root = TemporaryFolder("convergence")
    let server: TestServer
    let proxy: FaultProxy
    var workload: ConvergenceWorkload
    /// When kills land: a generator of its own, so that how many children a sync took (a trap
    /// adds one) never shifts the operations the seed generates.
    var timing: SplitMix64
    var model: ConvergenceModel
    var counts = Counts()
    /// The first mismatches, described for the failure message.
    var problems: [String] = []
    /// Every operation that named an entity, by `collection/id`: the reproduction of a mismatch.
    var history: [String: [String]] = [:]
    /// Todos found stored under another partition than their date (reported once each).
    var misfiled: Set<String> = []
    /// Each client's writer id (the prefix of its idempotency keys), once read.
    var storeIDs: [Int: String] = [:]
    /// The custom commands' tokens, each to be applied exactly once.
    var tokens: [String] = []
    /// A hard bound on the whole run: past it the test fails (it never does less work instead).
    let deadline: ContinuousClock.Instant

    init(seed: UInt64, clients: Int, faultProbability: Double, hardLimit: Duration) throws {
        clientCount = clients
        server = try TestServer()
        proxy = try FaultProxy(upstreamPort: server.port, seed: seed ^ 0xFA17, probability: faultProbability)
        workload = ConvergenceWorkload(seed: seed)
        timing = SplitMix64(seed: seed ^ 0x7133_0000)
        model = ConvergenceModel(clients: clients)
        deadline = ContinuousClock.now + hardLimit
    }

    func stop() {
        proxy.stop()
        server.stop()
    }

    private var logs: URL { root.url.deletingLastPathComponent() }
    private func store(_ client: Int) -> URL { logs.appendingPathComponent("client-\(client)") }

    func problem(_ text: String) {
        if problems.count < 40 { problems.append(text) }
    }

    // MARK: Offline operations

    /// Generates at least `count` transactions of offline operations for a client (a move chain is
    /// three) and runs them in its child, one `store.write` each.
    func offline(client: Int, round: Int, count: Int, prefer: Set<String>? = nil, avoid: Set<String> = [], label: String) async throws {
        var transactions: [[ModelOperation]] = []
        while transactions.count < count {
            transactions += workload.next(&model, client: client, round: round, prefer: prefer, avoid: avoid)
        }
        for operation in transactions.joined() {
            counts.operations += 1
            if case .custom(let token, _) = operation { tokens.append(token) }
            if let target = operation.target { history[target, default: []].append("\(label) c\(client): \(operation)") }
        }
        let file = logs.appendingPathComponent("ops-\(label)-c\(client).json")
        try JSONSerialization.data(withJSONObject: transactions.map { $0.map(\.json) }).write(to: file)
        let child = try ClientProcess(["apply", store(client).path, file.path], logs: logs, name: "apply-\(label)-c\(client)")
        let finished = await child.waitForExit(before: .now + .seconds(30))
        if !finished { _ = await child.kill() }
        guard finished, child.exitedCleanly else {
            problem("\(label) c\(client): applying the operations failed: \(child.errorText)")
            counts.mismatches += 1
            return
        }
        if let line = child.lines.last, !line.hasSuffix("missing 0") {
            problem("\(label) c\(client): the store lacked entities the model says it holds: \(line)")
            counts.mismatches += 1
        }
    }

    /// A push cut short, then more offline changes (mostly deletes of what was just changed, whose
    /// commands may have reached the server with their answers lost), before the whole sync runs.
    /// The new changes leave alone the entities whose push may have met a conflict (another client
    /// changed them since this one's last sync): the merge stored locally then depends on where the
    /// kill landed, and the model could not tell what the user saw.
    func interruptedPush(client: Int, round: Int, label: String) async throws {
        counts.interrupted += 1
        let mine = model.clients[client]
        var changed: Set<String> = [], contested: Set<String> = []
        for collection in ConvergenceModel.collections {
            let ids = Set(mine.local[collection, default: [:]].keys).union(mine.seen[collection, default: [:]].keys)
            for id in ids where mine.local[collection]?[id] != mine.seen[collection]?[id] {
                if model.server[collection]?[id] != mine.seen[collection]?[id] { contested.insert(id) } else { changed.insert(id) }
            }
        }
        _ = try await sync(client: client, label: label, kills: 1, pushOnly: true)
        try await offline(client: client, round: round, count: workload.int(1...4), prefer: changed, avoid: contested, label: label)
    }

    /// Offline changes made by an app process while a push of the same store runs beside it
    /// (one process writes, the other sends: the engine reads the queue, marks what leaves, and
    /// acknowledges, between the app's commits). The changes avoid every entity the server
    /// changed since this client last synced: where such a push meets a conflict, what the merge
    /// stored depends on when the app's next change landed, which the model cannot know. They
    /// often edit, then delete, an entity whose command is on its way.
    func concurrentPush(client: Int, round: Int, label: String) async throws {
        let mine = model.clients[client]
        var changed: Set<String> = [], others: Set<String> = []
        for collection in ConvergenceModel.collections {
            let ids = Set(mine.local[collection, default: [:]].keys).union(mine.seen[collection, default: [:]].keys)
                .union(model.server[collection, default: [:]].keys)
            for id in ids {
                if model.server[collection]?[id] != mine.seen[collection]?[id] {
                    others.insert(id)
                } else if mine.local[collection]?[id] != mine.seen[collection]?[id] {
                    changed.insert(id)
                }
            }
        }
        let pusher = try ClientProcess(syncArguments(client: client, pushOnly: true), logs: logs, name: "sync-\(label)-c\(client)")
        let before = counts.operations
        try await offline(client: client, round: round, count: workload.int(3...8), prefer: changed, avoid: others, label: label)
        counts.concurrent += counts.operations - before
        if !(await pusher.waitForExit(before: .now + .seconds(30))) {
            _ = await pusher.kill()
            problem("\(label) c\(client): a push beside the app's writes did not finish in 30 s: \(pusher.errorText.suffix(500))")
            counts.mismatches += 1
        }
        await waitForProxy(label, client)
        // Only the pushed commands matter here: a push that gave up or trapped leaves the rest
        // to the round's sync. Any other crash is a defect.
        if pusher.trapped {
            if pusher.errorText.contains("Transfer completed, but there's no response") {
                counts.traps += 1
            } else {
                problem("\(label) c\(client): the push died of signal \(pusher.process.terminationStatus): \(pusher.errorText.suffix(500))")
                counts.mismatches += 1
            }
        }
    }

    // MARK: Syncing

    private func syncArguments(client: Int, pushOnly: Bool) -> [String] {
        var arguments = ["sync", store(client).path, proxy.baseURL.absoluteString, "--max-seconds", "25"]
        if pushOnly { arguments.append("--push-only") }
        // The last client sends batches (PROTOCOL.md's `_batch`), the others one command per request.
        if client == clientCount - 1 { arguments += ["--batch", "4"] }
        return arguments
    }

    /// Runs sync children for a client, SIGKILLing the first `kills` at random instants, until one
    /// completes; returns what it printed (nil when none completed).
    func sync(client: Int, label: String, kills: Int, pushOnly: Bool = false) async throws -> ClientState? {
        let arguments = syncArguments(client: client, pushOnly: pushOnly)
        var killed = 0
        for attempt in 0..<(kills + 8) {
            // Every kill asked for happens, however slow the machine; only the hard bound ends this.
            guard ContinuousClock.now < deadline else { break }
            let child = try ClientProcess(arguments, logs: logs, name: "sync-\(label)-c\(client)-\(attempt)")
            if killed < kills {
                try await Task.sleep(for: .milliseconds(Int.random(in: 20...700, using: &timing)))
                guard await child.kill() else {
                    problem("\(label) c\(client): a killed sync child was not reaped in 10 s")
                    counts.mismatches += 1
                    return nil
                }
                if child.wasKilled {
                    killed += 1
                    counts.kills += 1
                    await waitForProxy(label, client)
                    if pushOnly { return nil }
                    continue
                }
            } else if !(await child.waitForExit(before: .now + .seconds(30))) {
                _ = await child.kill()
                problem("\(label) c\(client): a sync did not finish in 30 s: \(child.errorText.suffix(500))")
                counts.mismatches += 1
                return nil
            }
            await waitForProxy(label, client)
            if child.trapped {
                // Not our kill. FoundationNetworking's trap on a response cut inside its head
                // (#5285) is survivable here, like a kill; any other crash is a defect.
                if child.errorText.contains("Transfer completed, but there's no response") {
                    counts.traps += 1
                } else {
                    problem("\(label) c\(client): the sync child died of signal \(child.process.terminationStatus): \(child.errorText.suffix(500))")
                    counts.mismatches += 1
                }
                continue
            }
            guard child.exitedCleanly, let line = child.lines.last(where: { $0.hasPrefix("state ") }) else {
                problem("\(label) c\(client): the sync failed (status \(child.process.terminationStatus)): \(child.errorText.suffix(500))")
                counts.mismatches += 1
                return nil
            }
            return try JSONDecoder().decode(ClientState.self, from: Data(line.dropFirst(6).utf8))
        }
        problem("\(label) c\(client): no sync completed in \(kills + 8) attempts or by the hard time bound")
        counts.mismatches += 1
        return nil
    }

    /// Waits until the proxy relays nothing more for this client, so that none of its requests
    /// (a stalled one, say) reaches the server during the next client's turn.
    private func waitForProxy(_ label: String, _ client: Int) async {
        guard await proxy.waitUntilIdle(timeout: .seconds(10)) else {
            problem("\(label) c\(client): the proxy still relays a request 10 s after the child ended")
            counts.mismatches += 1
            return
        }
    }

    // MARK: Checking

    /// Compares the model's server, the real server and (if given) a client that just synced;
    /// reports each difference once, then takes the real values, so that later checks report only
    /// new differences.
    func check(_ label: String, client: Int?, state: ClientState?) throws {
        let real = try serverCollections()
        let local = state?.collections
        for collection in ConvergenceModel.collections {
            let expected = model.server[collection, default: [:]]
            var ids = Set(expected.keys).union(real[collection, default: [:]].keys)
            if let local { ids.formUnion(local[collection, default: [:]].keys) }
            for id in ids.sorted() {
                let want = expected[id]
                let onServer = real[collection]?[id]
                let onClient = local.map { $0[collection]?[id] }
                guard want != onServer || (onClient != nil && onClient! != want) else { continue }
                counts.mismatches += 1
                let back = want == nil && (onServer != nil || (onClient ?? nil) != nil)
                if back { counts.resurrected += 1 }
                func show(_ entity: ModelEntity?) -> String { entity?.rendered ?? "absent" }
                var text =
                    "\(label)\(client.map { " (after c\($0)'s sync)" } ?? ""): \(collection)/\(id)\(back ? " RESURRECTED" : ""):\n"
                    + "    model  \(show(want))\n    server \(show(onServer))"
                if let onClient { text += "\n    client \(show(onClient))" }
                text += "\n    operations:\n      " + (history["\(collection)/\(id)"] ?? ["none"]).joined(separator: "\n      ")
                text += "\n    pushes the server received:\n      " + serverPushes(collection, id).joined(separator: "\n      ")
                problem(text)
                model.server[collection, default: [:]][id] = onServer
            }
        }
        if let client, let state, state.pending != 0 || !state.failed.isEmpty {
            problem("\(label): c\(client) still has \(state.pending) pending and \(state.failed.count) failed commands: \(state.failed.prefix(3))")
            counts.mismatches += 1
        }
        if let client, let local {
            model.clients[client].seen = local
            model.clients[client].local = local
        }
        for (id, stored) in server.entities("todos").sorted(by: { $0.key < $1.key }) {
            let date = try ModelEntity.decode(stored.json)["date"]
            guard date != .string(stored.partition), !misfiled.contains(id) else { continue }
            misfiled.insert(id)
            problem(
                "\(label)\(client.map { " (after c\($0)'s sync)" } ?? ""): todos/\(id) (date \(date.map { "\($0)" } ?? "none")) is "
                    + "stored under the partition \"\(stored.partition)\" (Folio-Partition)\n    operations:\n      "
                    + (history["todos/\(id)"] ?? ["none"]).joined(separator: "\n      "))
            counts.mismatches += 1
        }
    }

    /// The pushes of one entity the server received, in order, with what it applied: the
    /// server's side of a mismatch's story. A key reads `c1 #26`: client 1's command 26 (`@4`: its
    /// resend after a conflict with version 4).
    func serverPushes(_ collection: String, _ id: String) -> [String] {
        var applied = server.appliedLog.filter { $0.collection == collection && $0.id == id }[...]
        let pushes = server.pushes.filter { $0.collection == collection && $0.id == id }
        guard !pushes.isEmpty else { return ["none"] }
        return pushes.map { push in
            let key = push.idempotencyKey ?? "no key"
            let precondition = push.header("If-Match").map { "If-Match \($0)" } ?? push.header("If-None-Match").map { "If-None-Match \($0)" } ?? "unconditional"
            var outcome = "not applied (replayed, or a conflict)"
            if let next = applied.first, next.key == key {
                outcome = "applied" + (next.version.map { " as version \($0)" } ?? "")
                applied = applied.dropFirst()
            }
            var line = "\(push.method) \(describeKey(key)) \(precondition) partition \"\(push.header("Folio-Partition") ?? "-")\": \(outcome)"
            if push.method == "PUT", let entity = try? ModelEntity.decode(push.body) { line += " \(entity.rendered)" }
            return line
        }
    }

    /// `c1 #26@4` for the key `<client 1's store id>-00000000000000000026@4`.
    private func describeKey(_ key: String) -> String {
        for client in 0..<clientCount {
            guard let storeID = storeIDs[client] ?? readStoreID(client), key.hasPrefix(storeID + "-") else { continue }
            let rest = key.dropFirst(storeID.count + 1)
            let parts = rest.split(separator: "@", maxSplits: 1)
            let number = parts.first.flatMap { UInt64($0) }.map(String.init) ?? String(parts.first ?? "")
            return "c\(client) #\(number)" + (parts.count > 1 ? "@\(parts[1])" : "")
        }
        return key
    }

    /// A client's writer id, the prefix of its keys, from its `.folio/writer.json` (FORMAT.md).
    private func readStoreID(_ client: Int) -> String? {
        guard let data = try? Data(contentsOf: store(client).appendingPathComponent(".folio/writer.json")),
            let marker = try? JSONDecoder().decode([String: ModelValue].self, from: data),
            case .string(let id)? = marker["writer"]
        else { return nil }
        storeIDs[client] = id
        return id
    }

    /// The real server's entities, as the model reads them.
    func serverCollections() throws -> ModelCollections {
        var collections: ModelCollections = [:]
        for collection in ConvergenceModel.collections {
            collections[collection] = try server.entities(collection).mapValues { try ModelEntity.decode($0.json) }
        }
        return collections
    }

    /// Every custom command reached the server exactly once; no idempotency key was applied twice.
    func checkExactlyOnce() {
        var applied: [String: Int] = [:]
        for change in server.appliedLog where change.collection == "_commands" {
            let token = (try? JSONDecoder().decode([String: String].self, from: change.body))?["token"] ?? "<unreadable body>"
            applied[token, default: 0] += 1
        }
        for token in tokens where applied[token, default: 0] != 1 {
            problem("custom command \(token) applied \(applied[token, default: 0]) times")
            counts.mismatches += 1
        }
        for token in Set(applied.keys).subtracting(tokens) {
            problem("custom command \(token) applied but never enqueued")
            counts.mismatches += 1
        }
        if server.maxAppliedCountPerKey > 1 {
            problem("an idempotency key was applied \(server.maxAppliedCountPerKey) times")
            counts.mismatches += 1
        }
    }
}

@testable import Folio
import FolioCrashSupport
import Foundation
import Testing

/// The drain's shortcuts through bytes it already has: a batch body built by copying each
/// command's own body in (not parsed and written again), and an acknowledgement whose server
/// entity is the store's own JSON recording only the version (not decoding the server's copy).
/// Both are checked against models written from PROTOCOL.md ("Batches") and FORMAT.md (partition
/// files), over random commands and answers from a seed.
@Suite struct DrainBytesTests {
    // MARK: Batch bodies

    /// A random JSON value: nested objects and arrays, numbers, escapes, non-ASCII and strings that
    /// are only canonically equivalent ("é" as one scalar or two).
    static func randomValue(_ random: inout SplitMix64, depth: Int = 0) -> JSONValue {
        let pick = Int.random(in: 0..<(depth > 2 ? 4 : 6), using: &random)
        switch pick {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &random))
        case 2: return .number(["0", "-1", "42", "3.5", "1e-7", "12345678901234567890"][Int.random(in: 0..<6, using: &random)])
        case 3: return .string(randomText(&random))
        case 4: return .array((0..<Int.random(in: 0...3, using: &random)).map { _ in randomValue(&random, depth: depth + 1) })
        default:
            var members: [String: JSONValue] = [:]
            for _ in 0..<Int.random(in: 0...4, using: &random) { members[randomText(&random)] = randomValue(&random, depth: depth + 1) }
            return .object(members)
        }
    }

    static func randomText(_ random: inout SplitMix64) -> String {
        let pieces = ["a", "Z", " ", "\"", "\\", "/", "\n", "\t", "\u{01}", "caf\u{E9}", "cafe\u{301}", "日本", "🙂", "</script>", "%2F"]
        return (0..<Int.random(in: 0...4, using: &random)).map { _ in pieces[Int.random(in: 0..<pieces.count, using: &random)] }.joined()
    }

    /// A command as the queue holds it, read back from its file's JSON.
    static func command(_ sequence: UInt64, _ random: inout SplitMix64) throws -> OutboxCommand {
        let operation: OutboxCommand.Operation = [.upsert, .delete, .custom("archive-" + String(sequence))][Int.random(in: 0..<3, using: &random)]
        var entity: [String: JSONValue] = ["id": .string("e\(sequence)")]
        if case .object(let extra) = randomValue(&random, depth: 2) { entity.merge(extra) { old, _ in old } }
        let body: JSONValue? = operation == .delete ? nil : .object(entity)
        let json = OutboxCommand.make(
            sequence: sequence, writer: "S", operation: operation, collection: "things", entityID: "e \(sequence) é%",
            partition: "2026-11-22", baseVersion: Bool.random(using: &random) ? "v\(sequence)" : nil, body: body,
            timestamp: Date(timeIntervalSince1970: 1_790_000_000))
        // Through the file's bytes, as the queue reads it.
        let parsed = try JSONParser.parse(JSONWriter.pretty(json))
        return try OutboxCommand(json: parsed, path: "outbox/" + CommandFileName.name(sequence))
    }

    /// PROTOCOL.md's batch, member by member: `{"requests": [{"method", "path", "headers", "body"?}]}`,
    /// each body the JSON the request carries.
    static func expectedBatch(_ requests: [PushRequest]) throws -> JSONValue {
        .array(
            try requests.map { request in
                let (method, path) = HTTPTransport.route(request.command)
                var item: [String: JSONValue] = [
                    "method": .string(method), "path": .string(path),
                    "headers": .object(HTTPTransport.pushHeaders(request).mapValues { .string($0) }),
                ]
                if let body = request.body { item["body"] = try JSONParser.parse([UInt8](body)) }
                return .object(item)
            })
    }

    @Test func aBatchBodyIsTheProtocolsDocumentWithEachCommandsBytes() throws {
        let seed: UInt64 = 0xBA7C_4B0D
        var random = SplitMix64(seed: seed)
        var checked = 0, copied = 0, merged = 0
        for round in 0..<200 {
            var requests: [PushRequest] = []
            for index in 0..<Int.random(in: 2...12, using: &random) {
                let command = try Self.command(UInt64(round * 100 + index + 1), &random)
                // The command's own body, or another (a merge after a conflict), or none.
                var body = command.body
                if body != nil, Int.random(in: 0..<4, using: &random) == 0 {
                    var members = command.json["entity"]?.objectValue ?? [:]
                    members["merged"] = Self.randomValue(&random)
                    // Pretty, unsorted-looking bytes: a merge need not be compact.
                    body = Data(JSONWriter.pretty(.object(members)))
                    merged += 1
                } else if body != nil {
                    copied += 1
                }
                let precondition: PushRequest.Precondition = [.absent, .none, .version("v\(index)")][Int.random(in: 0..<3, using: &random)]
                requests.append(PushRequest(command: command, body: body, precondition: precondition, idempotencyKey: command.id))
            }
            let bytes = try HTTPTransport.batchBody(requests)
            let document = try JSONParser.parse(bytes)
            #expect(document.objectValue?.keys.sorted() == ["requests"], "seed \(seed), round \(round)")
            // Compared as written bytes: canonically equivalent strings must not pass for equal.
            let got = document["requests"].map { JSONWriter.compact($0) }
            #expect(got == JSONWriter.compact(try Self.expectedBatch(requests)), "seed \(seed), round \(round)")
            for request in requests where request.body == request.command.body {
                if let body = request.body {
                    #expect(bytes.firstRange(of: Array(#""body":"#.utf8) + [UInt8](body)) != nil, "a command's own body is sent as it is")
                }
            }
            checked += requests.count
        }
        print("batch bodies: seed \(seed), \(checked) requests in 200 batches, \(copied) bodies copied as they are, \(merged) merged bodies rewritten")
    }

    @Test func aBodyThatIsNotJSONFailsTheBatchNamingIt() throws {
        var random = SplitMix64(seed: 7)
        var upsert = try Self.command(1, &random)
        while upsert.operation != .upsert { upsert = try Self.command(upsert.sequence + 1, &random) }
        let good = PushRequest(command: upsert, body: upsert.body, precondition: .absent, idempotencyKey: upsert.id)
        let bad = PushRequest(command: upsert, body: Data(#"{"id": "e1", "title": "#.utf8), precondition: .absent, idempotencyKey: upsert.id)
        #expect(throws: FolioError.self) { try HTTPTransport.batchBody([good, bad]) }
        do {
            _ = try HTTPTransport.batchBody([good, bad])
        } catch {
            #expect(error.code == .badResponse && error.message.contains("a command's body"), "\(error)")
        }
    }

    // MARK: Acknowledgements

    /// Answers every push with a version and, as scripted per entity, the entity: none, the bytes
    /// sent, a canonically equivalent spelling of them, or a changed copy.
    struct ScriptedTransport: Transport {
        enum Answer: CaseIterable { case none, same, equivalent, changed }
        let answers: [String: Answer]

        static func answer(_ kind: Answer, to body: Data) throws -> Data? {
            switch kind {
            case .none: return nil
            case .same: return body
            case .equivalent:
                // "é" as one scalar becomes "e" + combining acute: equal as Swift Strings, not as JSON.
                return Data(String(decoding: body, as: UTF8.self).replacingOccurrences(of: "\u{E9}", with: "e\u{301}").utf8)
            case .changed:
                var object = try JSONParser.parse([UInt8](body)).objectValue ?? [:]
                object["title"] = .string("changed on the server")
                return Data(JSONWriter.compact(.object(object)))
            }
        }

        func push(_ request: PushRequest) async throws -> PushOutcome {
            let id = request.command.entityID ?? ""
            return .applied(
                version: "v-\(request.command.sequence)",
                entity: try request.body.flatMap { try Self.answer(answers[id] ?? .none, to: $0) })
        }

        func pull(_ request: PullRequest) async throws -> PullResponse { PullResponse(items: []) }
    }

    @Test func anAcknowledgementStoresTheServersBytesAndVersion() async throws {
        let seed: UInt64 = 0xAC4_2026
        var random = SplitMix64(seed: seed)
        let folder = TemporaryFolder()
        let store = try await Store.open(at: folder.url, configuration: .testing(durability: .relaxed))
        var todos: [Todo] = []
        var answers: [String: ScriptedTransport.Answer] = [:]
        for index in 0..<60 {
            var item = todo(
                ["caf\u{E9} #\(index)", "plain #\(index)"][Int.random(in: 0..<2, using: &random)],
                on: String(format: "2026-11-%02d", Int.random(in: 1...4, using: &random)))
            item.priority = index
            todos.append(item)
            answers[item.id.uuidString] = ScriptedTransport.Answer.allCases.randomElement(using: &random)!
        }
        let queued = todos
        try await store.write { tx in for item in queued { try tx.upsert(item) } }
        try await store.checkpoint()
        // What each command sent, from the files, before the drain takes them.
        var sent: [String: (body: Data, sequence: UInt64)] = [:]
        for command in try await store.pendingCommands() { sent[command.entityID!] = (command.body!, command.sequence) }

        let engine = SyncEngine(store: store, transport: ScriptedTransport(answers: answers), configuration: .testing)
        let report = try await engine.drainNow()
        #expect(report.sent == todos.count && report.remaining == 0)
        await engine.stop()
        try await store.checkpoint()
        try await store.close()

        // The model (FORMAT.md): each day file holds, per id, the server's entity when it sent one
        // (byte for byte once compacted), else what was sent, and the version it answered.
        var counts: [String: Int] = [:]
        for item in todos {
            let id = item.id.uuidString
            let path = "todos/2026-11/\(item.date).json"
            let file = try JSONParser.parse([UInt8](try Data(contentsOf: folder.url.appendingPathComponent(path))))
            let (body, sequence) = try #require(sent[id])
            let expected = try ScriptedTransport.answer(answers[id]!, to: body) ?? body
            let stored = try #require(file["entities"]?[id], "\(path) lost \(id)")
            #expect(
                JSONWriter.compact(stored) == JSONWriter.compact(try JSONParser.parse([UInt8](expected))),
                "seed \(seed): \(id) answered \(answers[id]!) is stored as \(String(decoding: JSONWriter.compact(stored), as: UTF8.self))")
            #expect(file["versions"]?[id]?.stringValue == "v-\(sequence)", "seed \(seed): the version of \(id)")
            counts["\(answers[id]!)", default: 0] += 1
        }
        print("acknowledged bytes: seed \(seed), \(todos.count) todos, answers \(counts.sorted { $0.key < $1.key })")
    }
}

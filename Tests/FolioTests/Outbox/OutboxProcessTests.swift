@testable import Folio
import FolioCrashSupport
import Foundation
import Testing

// The outbox under process-level faults: the crash test (CrashTests.swift) kills writers of a push
// collection, and two writer processes push at once (TwoProcessTests.swift). OutboxCheck below is
// the outbox half of their StoreCheck; the test here shows that it catches what it should. The
// children are `folio-crash-child write … --outbox` (Tests/CrashChild/main.swift).

/// The outbox invariants of a store written by `--outbox` children. Nothing acknowledges and
/// nothing coalesces, so the pending queue holds every command ever enqueued: replayed from an
/// empty store, it must rebuild the store exactly, one whole transaction at a time, in commit order.
enum OutboxCheck {
    static func violations(_ store: Store, _ folder: URL, pushed: [PushedSlot]) async -> [String] {
        var problems: [String] = []
        let pending: [OutboxCommand]
        do {
            pending = try await store.pendingCommands()
            let failed = try await store.failedCommands().count, quarantined = try await store.quarantinedCommands().count
            if failed + quarantined > 0 { problems.append("\(failed) failed and \(quarantined) quarantined commands; none should be") }
        } catch { return ["reading the outbox failed: \(error)"] }
        return problems + numbersAndFiles(pending, folder) + replay(pending, pushed: pushed)
    }

    /// Sequence numbers are unique and increasing, ids are `<writer id>-<20 digits>` and unique (FORMAT.md, `.folio/writer.json`), and after the
    /// open's recovery checkpoint `outbox/` holds exactly the pending commands (parsed here with
    /// JSONSerialization, independently of Folio's parser).
    static func numbersAndFiles(_ pending: [OutboxCommand], _ folder: URL) -> [String] {
        var problems: [String] = []
        for (a, b) in zip(pending, pending.dropFirst()) where a.sequence >= b.sequence {
            problems.append("command \(b.sequence) comes after \(a.sequence): numbers must be unique and increasing")
        }
        var names: Set<String> = [], ids: Set<String> = []
        for command in pending {
            let digits = String(command.sequence)
            let padded = String(repeating: "0", count: max(0, 20 - digits.count)) + digits
            // A writer id (this folder's, or the original's for commands a copy was made with).
            if !command.id.hasSuffix("-" + padded) || command.id.count <= 21 {
                problems.append("command \(command.sequence) has id \(command.id), not <writer id>-\(padded)")
            }
            if !ids.insert(command.id).inserted { problems.append("command \(command.sequence) has the id of another: \(command.id)") }
            names.insert(padded + ".json")
            let file = (try? Data(contentsOf: folder.appendingPathComponent("outbox/\(padded).json")))
                .flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
            if let file, file["sequence"] as? Int == Int(command.sequence), file["id"] as? String == command.id,
                file["entityID"] as? String == command.entityID, file["partition"] as? String == command.partition,
                file["operation"] as? String == (command.operation == .upsert ? "upsert" : "delete"),
                same(file["entity"], command.body.flatMap { try? JSONSerialization.jsonObject(with: $0) })
            {
                continue
            }
            problems.append("outbox/\(padded).json does not hold pending command \(command.sequence)")
        }
        let listed = Set(
            ((try? FileManager.default.contentsOfDirectory(atPath: folder.path + "/outbox")) ?? []).filter {
                var isDirectory: ObjCBool = false
                return FileManager.default.fileExists(atPath: folder.path + "/outbox/" + $0, isDirectory: &isDirectory) && !isDirectory.boolValue
            })
        if listed != names {
            problems.append(
                "outbox/ has files for no pending command \(listed.subtracting(names).sorted().prefix(3)), "
                    + "and no file for pending commands \(names.subtracting(listed).sorted().prefix(3))")
        }
        return problems
    }

    /// The queue's files after a check (which checkpoints): sequence → bytes.
    static func queue(in folder: URL) -> [UInt64: Data] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path + "/outbox")) ?? []
        return Dictionary(
            names.compactMap { name in
                UInt64(name.dropLast(5)).flatMap { sequence in
                    (try? Data(contentsOf: folder.appendingPathComponent("outbox/" + name))).map { (sequence, $0) }
                }
            }, uniquingKeysWith: { a, _ in a })
    }

    /// FIFO across restarts: nothing acknowledges, so a later queue is an earlier one with commands
    /// appended after its last, and a command file, written once, keeps its bytes.
    static func onlyAppended(_ before: [UInt64: Data], _ after: [UInt64: Data]) -> [String] {
        let changed = before.filter { after[$0.key] != $0.value }.keys.sorted()
        let last = before.keys.max() ?? 0
        let inserted = after.keys.filter { $0 < last && before[$0] == nil }.sorted()
        return (changed.isEmpty ? [] : ["commands \(changed.prefix(5)) vanished or changed since the previous check"])
            + (inserted.isEmpty ? [] : ["commands \(inserted.prefix(5)) appeared before the previous check's last, \(last)"])
    }

    /// Whether two values JSONSerialization parsed are the same JSON (NSDictionary's == is slow).
    private static func same(_ a: Any?, _ b: Any?) -> Bool {
        switch (a, b) {
        case (nil, nil): return true
        case (let x as [String: Any], let y as [String: Any]): return x.count == y.count && x.allSatisfy { same($0.value, y[$0.key]) }
        case (let x as [Any], let y as [Any]): return x.count == y.count && zip(x, y).allSatisfy { same($0, $1) }
        case (let x as String, let y as String): return x == y
        case (let x as NSNumber, let y as NSNumber): return x == y
        default: return a is NSNull && b is NSNull
        }
    }

    typealias Entry = (command: OutboxCommand, body: [String: Any]?)

    /// Replays the queue. A transaction's commands are one journal record's: consecutive numbers,
    /// in (partition, id) order, so the ledger's is anywhere among them. Upserts carry their
    /// transaction; a delete belongs to the transaction whose ledger says it deleted that id.
    static func replay(_ pending: [OutboxCommand], pushed: [PushedSlot]) -> [String] {
        var problems: [String] = []
        let ledgers = Dictionary(
            pushed.filter { $0.id == Slot.ledgerID($0.writer) }.map { ($0.writer, $0.transaction) },
            uniquingKeysWith: max)
        // First pass: read every command, and each writer's ledger command of each transaction.
        var entries: [(writer: String, entry: Entry)] = []
        var ledgerBodies: [String: [Int: [String: Any]]] = [:]   // writer → transaction → ledger JSON
        for command in pending {
            guard command.collection == PushedSlot.collection, let id = command.entityID, let cut = id.lastIndex(of: "-"),
                command.operation == .upsert || command.operation == .delete
            else {
                problems.append("command \(command.sequence) is not an upsert or delete of a pushed slot")
                continue
            }
            let writer = String(id[..<cut])
            var body: [String: Any]?
            if command.operation == .upsert {
                body = command.body.flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
                guard let body, body["id"] as? String == id, body["writer"] as? String == writer,
                    let transaction = body["transaction"] as? Int
                else {
                    problems.append("upsert \(command.sequence) of \(id) does not carry the slot's JSON")
                    continue
                }
                // No command without its change: its writer committed that transaction.
                if transaction > ledgers[writer, default: 0] {
                    problems.append(
                        "command \(command.sequence) (\(id)) is of transaction \(transaction) of \(writer), "
                            + "which never committed: the store's ledger is at \(ledgers[writer, default: 0])")
                }
                if id == Slot.ledgerID(writer), ledgerBodies[writer, default: [:]].updateValue(body, forKey: transaction) != nil {
                    problems.append("two ledger commands of transaction \(transaction) of \(writer)")
                }
            }
            entries.append((writer, (command, body)))
        }
        // Second pass: cut each writer's commands into transactions, check each, replay them.
        var replayed: [String: Int] = [:]   // id → transaction: the store as the commands rebuild it
        var current: [String: (transaction: Int, run: [Entry])] = [:]   // writer → its open transaction
        func close(_ writer: String) {
            guard let open = current[writer], !open.run.isEmpty else { return }
            problems += check(open.run, open.transaction, of: writer, ledger: ledgerBodies[writer]?[open.transaction], replayed: &replayed)
        }
        for (writer, entry) in entries {
            let now = current[writer]?.transaction ?? 0
            let transaction: Int
            if let body = entry.body {
                transaction = body["transaction"] as! Int   // checked in the first pass
            } else {
                // The open transaction's ledger claims the delete, or the next one's does.
                func deletes(_ candidate: Int) -> Bool {
                    ledgerBodies[writer]?[candidate]?["deletedAt"].flatMap { $0 as? [String: Int] }?[entry.command.entityID!] == candidate
                }
                guard let owner = [now, now + 1].first(where: deletes) else {
                    problems.append("delete \(entry.command.sequence) of \(entry.command.entityID!) is in no ledger of transaction \(now) or \(now + 1)")
                    continue
                }
                transaction = owner
            }
            if transaction < now {
                // FIFO: a writer's commands come in the order its transactions committed.
                problems.append("command \(entry.command.sequence) of transaction \(transaction) of \(writer) comes after one of transaction \(now)")
            } else if transaction == now {
                current[writer]!.run.append(entry)
            } else {
                close(writer)
                if transaction != now + 1 { problems.append("no command of transactions \(now + 1)…\(transaction - 1) of \(writer)") }
                current[writer] = (transaction, [entry])
            }
        }
        for writer in current.keys.sorted() { close(writer) }
        // No change without its command, for the ledgers: the last committed transaction has one.
        for (writer, transaction) in ledgers where current[writer]?.transaction != transaction {
            problems.append("writer \(writer) is at transaction \(transaction), its last commands at \(current[writer]?.transaction ?? 0)")
        }
        // No change without its command, for the slots: the store is what the queue says.
        let present = Dictionary(pushed.map { ($0.id, $0.transaction) }, uniquingKeysWith: max)
        for (id, transaction) in present where replayed[id] != transaction {
            problems.append(
                "\(id) is in the store at transaction \(transaction), its last command says \(replayed[id].map { "transaction \($0)" } ?? "absent")")
        }
        for (id, transaction) in replayed where present[id] == nil {
            problems.append("\(id) is absent from the store, but its last command (transaction \(transaction)) upserts it")
        }
        return problems
    }

    /// Checks one transaction's commands against its ledger command and applies them to `replayed`.
    private static func check(
        _ run: [Entry], _ transaction: Int, of writer: String, ledger: [String: Any]?,
        replayed: inout [String: Int]
    ) -> [String] {
        let first = run.first!.command.sequence, last = run.last!.command.sequence
        let label = "transaction \(transaction) of \(writer) (commands \(first)…\(last))"
        guard let ledger, let group = ledger["group"] as? [String], let deletedAt = ledger["deletedAt"] as? [String: Int] else {
            return ["\(label) has no ledger command: part of a transaction"]
        }
        var problems: [String] = []
        if last - first + 1 != UInt64(run.count) { problems.append("\(label) is interleaved with other commands: not one record") }
        var ids: Set<String> = []
        for (command, body) in run {
            let id = command.entityID!
            if !ids.insert(id).inserted || !group.contains(id) { problems.append("\(label): a second command, or one outside the group, for \(id)") }
            if let body {
                if body["group"] as? [String] != group { problems.append("\(label): the upsert of \(id) has another group") }
                replayed[id] = transaction
            } else {
                if replayed[id] == nil { problems.append("\(label) deletes \(id), which no earlier command created") }
                replayed[id] = nil
            }
        }
        // A group member without a command can only be a deletion of an absent slot: no change.
        for id in group where !ids.contains(id) && (deletedAt[id] != transaction || replayed[id] != nil) {
            problems.append("\(label) has no command for \(id), which it \(deletedAt[id] == transaction ? "deleted" : "wrote")")
        }
        return problems
    }
}

@Suite struct OutboxProcessTests {
    /// OutboxCheck must not pass vacuously: a lost command file, an orphan command of a transaction
    /// that never committed, and a committed half transaction (`--tear-last`) are each reported.
    @Test func theOutboxCheckNoticesMissingAndOrphanCommands() async throws {
        let root = TemporaryFolder("intact")
        let logs = root.url.deletingLastPathComponent()
        let child = try CrashChild(["write", root.url.path, "7", "20", "full", "T", "--outbox"], logs: logs, name: "intact")
        defer { child.kill() }
        #expect(await child.waitForExit(before: .now + .seconds(30)), "the child did not finish in 30 s")
        #expect(child.exitedCleanly, "\(child.errorText)")
        let intact = await StoreCheck.run(root.url, acked: ["T": 20])
        #expect(intact.violations.isEmpty, "\(intact.violations)")
        let commands = StoreCheck.files(under: root.url).filter { $0.hasPrefix("outbox/") }
        #expect(commands.count > 40, "20 transactions enqueue at least 3 commands each, found \(commands.count)")

        // A slot's upsert command in the middle of the queue (not a ledger's) goes missing.
        let lost = logs.appendingPathComponent("lost")
        try FileManager.default.copyItem(at: root.url, to: lost)
        let slotCommands = try commands.filter { try (command(root.url, $0)["entityID"] as? String)?.hasSuffix("-ledger") == false }
        let victim = slotCommands[slotCommands.count / 2]
        try FileManager.default.removeItem(at: lost.appendingPathComponent(victim))
        // Folio itself refuses such a copy (its log says the command file belongs there)...
        let refused = await StoreCheck.run(lost, acked: ["T": 20])
        #expect(refused.violations.contains { $0.contains("copy of a store taken while") }, "\(refused.violations)")
        // ...and without the log, the check of the spec must notice it on its own.
        try FileManager.default.removeItem(at: lost.appendingPathComponent(WrittenLog.path))
        let lostFound = await StoreCheck.run(lost, acked: ["T": 20])
        #expect(lostFound.violations.contains { $0.contains("has no command for") }, "\(victim): \(lostFound.violations)")
        #expect(OutboxCheck.onlyAppended(OutboxCheck.queue(in: root.url), OutboxCheck.queue(in: lost)).count == 1)

        // An orphan: a copy of the last slot command, renumbered, for transaction 21 (never committed).
        let orphan = logs.appendingPathComponent("orphan")
        try FileManager.default.copyItem(at: root.url, to: orphan)
        var json = try command(root.url, slotCommands.last!)
        var entity = try #require(json["entity"] as? [String: Any])
        let sequence = try #require(commands.compactMap { UInt64($0.dropFirst(7).dropLast(5)) }.max()) + 1
        let name = CommandFileName.name(sequence)   // 20 digits and .json
        entity["transaction"] = 21
        json["entity"] = entity
        json["sequence"] = sequence
        json["id"] = String((json["id"] as? String ?? "").dropLast(20)) + name.dropLast(5)
        try JSONSerialization.data(withJSONObject: json).write(to: orphan.appendingPathComponent("outbox/" + name))
        try FileManager.default.removeItem(at: orphan.appendingPathComponent(WrittenLog.path))
        let orphanFound = await StoreCheck.run(orphan, acked: ["T": 20])
        #expect(orphanFound.violations.contains { $0.contains("which never committed") }, "\(orphanFound.violations)")

        // Half a transaction committed: its first slot's command without the rest or the ledger.
        let torn = TemporaryFolder("torn")
        let tearer = try CrashChild(
            ["write", torn.url.path, "8", "20", "full", "T", "--outbox", "--tear-last", "1"],
            logs: logs, name: "torn")
        defer { tearer.kill() }
        #expect(await tearer.waitForExit(before: .now + .seconds(30)), "the child did not finish in 30 s")
        #expect(tearer.exitedCleanly, "\(tearer.errorText)")
        let tornFound = await StoreCheck.run(torn.url, acked: ["T": 20])
        #expect(tornFound.violations.contains { $0.contains("has no ledger command") }, "\(tornFound.violations)")
        #expect(tornFound.violations.contains { $0.contains("which never committed") }, "\(tornFound.violations)")
        print(
            "outbox check: a lost command, an orphan and a torn transaction give \(lostFound.violations.count), "
                + "\(orphanFound.violations.count) and \(tornFound.violations.count) violations")
    }

    private func command(_ folder: URL, _ path: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: folder.appendingPathComponent(path))) as? [String: Any])
    }
}

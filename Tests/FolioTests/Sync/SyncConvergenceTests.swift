@testable import Folio
import FolioCrashSupport
import FolioTestServer
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// The whole sync path under stress: thousands of random commands, a server that drops
/// connections before and after applying, answers 5xx/429 and garbage at random, and refuses some
/// entities for good, and a client process SIGKILLed mid-drain again and again. In the end the
/// server and the client agree, every command was applied exactly once and in order per entity,
/// and the only dead letters are the refused entities' commands.
@Suite struct SyncConvergenceTests {
    static let commandCount = 3000
    static let kills = 6

    @Test func killedClientsAndAFaultyServerStillConverge() async throws {
        var random = SplitMix64(seed: 0x5EED_5_C0DE)
        let folder = TemporaryFolder()
        let server = try TestServer()
        defer { server.stop() }
        server.randomFaults = RandomFaults(seed: 42, probability: 0.1)
        server.permanentRejection = { request in request.id?.hasPrefix("refused") == true }

        let clock = ContinuousClock.now
        // Offline: write the commands (upserts that move items between days, deletes, recreates).
        let store = try await Store.open(at: folder.url, configuration: .testing(durability: .relaxed))
        let ids = (0..<120).map { "item-\($0)" } + (0..<5).map { "refused-\($0)" }
        var commands = 0
        var version = 0
        while commands < Self.commandCount {
            let batch = Int.random(in: 1...4, using: &random)
            let chosen = (0..<batch).map { _ in ids[Int.random(in: 0..<ids.count, using: &random)] }
            let deleteOne = Int.random(in: 0..<5, using: &random) == 0
            version += 1
            let value = version
            let days = (0..<batch).map { _ in String(format: "2026-11-%02d", Int.random(in: 1...30, using: &random)) }
            commands += try await store.write { tx in
                var changed = Set<String>()
                for (index, id) in chosen.enumerated() {
                    if deleteOne && index == 0 {
                        if try tx.delete(SyncItem.self, id: id) { changed.insert(id) }
                    } else {
                        try tx.upsert(SyncItem(id: id, day: days[index], value: value, note: "change \(value) of \(id)"))
                        changed.insert(id)
                    }
                }
                return changed.count
            }
        }
        let queued = try await store.pendingCommands()
        let refusedCommands = queued.filter { $0.entityID?.hasPrefix("refused") == true }.count
        try await store.close()
        let written = ContinuousClock.now - clock

        // Drain from a child process, killed at random instants, then once to the end.
        let logs = folder.url.deletingLastPathComponent()
        // Only a hung drain ends at the deadline: a loaded machine drains the same commands, slower.
        let deadline = ContinuousClock.now + .seconds(600)
        for round in 0..<Self.kills {
            let child = try CrashChild(
                [folder.url.path, server.baseURL.absoluteString], logs: logs,
                name: "sync-\(round)", executable: "folio-sync-child")
            try await Task.sleep(for: .milliseconds(Int.random(in: 150...900, using: &random)))
            child.kill()
        }
        let last = try CrashChild(
            [folder.url.path, server.baseURL.absoluteString], logs: logs, name: "sync-last",
            executable: "folio-sync-child")
        let finished = await last.waitForExit(before: deadline)
        if !finished { last.kill() }
        #expect(finished && last.exitedCleanly, "the last drain: \(last.errorText)")

        let reopened = try await Store.open(at: folder.url, configuration: .testing())
        #expect(try await reopened.pendingCommandCount() == 0)
        let failed = try await reopened.failedCommands()
        #expect(
            failed.allSatisfy { $0.command.entityID?.hasPrefix("refused") == true && $0.status == 400 },
            "dead letters only for the refused entities: \(failed.filter { $0.status != 400 }.map(\.reason))")
        #expect(failed.count == refusedCommands)

        // The server holds what the client holds.
        let local = Dictionary(uniqueKeysWithValues: try await reopened.fetch(Query<SyncItem>()).map { ($0.id, $0) })
        let onServer = server.entities("items")
        var mismatches: [String] = []
        for id in ids where !id.hasPrefix("refused") {
            let remote = try onServer[id].map { try SyncHarness.decoder.decode(SyncItem.self, from: $0.json) }
            if remote != local[id] { mismatches.append("\(id): server \(String(describing: remote)), client \(String(describing: local[id]))") }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(5))")

        // Exactly once, and in order per entity.
        #expect(server.maxAppliedCountPerKey == 1)
        var appliedPerCommand: [UInt64: Int] = [:]
        var lastPerEntity: [String: UInt64] = [:]
        var outOfOrder: [String] = []
        for change in server.appliedLog {
            guard let key = change.key, let sequence = Self.sequence(ofKey: key) else { continue }
            appliedPerCommand[sequence, default: 0] += 1
            if let previous = lastPerEntity[change.id], previous > sequence { outOfOrder.append("\(change.id): \(previous) then \(sequence)") }
            lastPerEntity[change.id] = sequence
        }
        let twice = appliedPerCommand.filter { $0.value > 1 }.keys.sorted()
        let details = server.appliedLog.filter { change in twice.prefix(3).contains { change.key.flatMap(Self.sequence(ofKey:)) == $0 } }
            .map { "\($0.method) \($0.id) \($0.key ?? "") v\($0.version ?? "-")" }
        #expect(twice.isEmpty, "commands applied under two keys: \(twice.count): \(details)")
        #expect(outOfOrder.isEmpty, "\(outOfOrder.prefix(5))")
        #expect(appliedPerCommand.count + failed.count == queued.count)
        print(
            "sync convergence: \(queued.count) commands, \(Self.kills) kills, \(server.firedFaultCount) injected faults, "
                + "\(server.requestCount) requests, \(failed.count) dead letters (all refused), 0 mismatches; written in \(written), drained in \(ContinuousClock.now - clock - written)"
        )
        try await reopened.close()
    }

    /// The command number in an idempotency key `<store>-<20 digits>[@<version>]`.
    static func sequence(ofKey key: String) -> UInt64? {
        let command = key.split(separator: "@").first.map(String.init) ?? key
        return command.split(separator: "-").last.flatMap { UInt64($0) }
    }
}

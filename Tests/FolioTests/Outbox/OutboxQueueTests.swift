@testable import Folio
import FolioCrashSupport
import Foundation
import Testing

/// The outbox queue alone (Outbox/OutboxQueue.swift), without a store or files: it counts the
/// commands records queue, keeps the in-flight mark, and keeps loaded commands current. The
/// expectations come from a small model of FORMAT.md's outbox changes (enqueue makes a command
/// pending; remove sends it to `sent/` if archived and pending, else drops it; fail moves a
/// pending one to `failed/`; retry moves a failed one back), not from OutboxState.
@Suite struct OutboxQueueTests {
    private enum Place: Equatable { case pending, failed, sent, gone }

    private static func command(_ sequence: UInt64, id: String) -> JSONValue {
        .object([
            "sequence": .number(String(sequence)), "collection": .string("todos"), "entityID": .string(id),
            "operation": .string("upsert"),
        ])
    }

    @Test func syncModesAnswerForRegisteredCollectionsOnly() {
        let queue = OutboxQueue()
        queue.register(.push, for: "todos")
        queue.register(.push(coalescing: true), for: "notes")
        queue.register(.localOnly, for: "drafts")
        #expect(queue.pushes("todos") && queue.pushes("notes"))
        #expect(!queue.pushes("drafts") && !queue.pushes("unknown"), "a collection never registered queues nothing")
        #expect(queue.coalesces("notes") && !queue.coalesces("todos") && !queue.coalesces("unknown"))
    }

    /// Random records (enqueue, remove, fail, retry), loads, forgets, checkpoints and in-flight
    /// marks, 300 steps per round from a seed.
    @Test func countsMarksAndLoadedCommandsMatchAModel() {
        let seed = ProcessInfo.processInfo.environment["FOLIO_QUEUE_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64(UInt32.max))
        var random = SplitMix64(seed: seed)
        var checks = 0
        for round in 0..<20 {
            let queue = OutboxQueue()
            var queued = 0
            var inFlight: UInt64 = 0
            var loaded: [UInt64: Place]?
            var next: UInt64 = 1
            var failure: String?
            for step in 0..<300 where failure == nil {
                switch random.next() % 10 {
                case 0:
                    // The files read afresh: in this model they hold nothing yet.
                    queue.keep(OutboxState())
                    loaded = [:]
                case 1:
                    queue.forgetCommands()
                    loaded = nil
                case 2:
                    let mark = random.next() % (next + 2)
                    queue.markInFlight(through: mark)
                    inFlight = max(inFlight, mark)
                case 3:
                    queue.checkpointed()
                    if queue.commands?.touched.isEmpty == false { failure = "a checkpoint left commands to write" }
                default:
                    var changes: [JournalRecord.OutboxChange] = []
                    for _ in 0..<(1 + random.next() % 3) {
                        let sequence = next > 1 ? 1 + random.next() % (next - 1) : 1
                        switch random.next() % 4 {
                        case 0:
                            changes.append(.enqueue(sequence: next, command: Self.command(next, id: "e\(next % 5)")))
                            loaded?[next] = .pending
                            next += 1
                            queued += 1
                        case 1:
                            let archive = random.next() % 2 == 0
                            changes.append(.remove(sequence: sequence, archive: archive))
                            if loaded != nil { loaded![sequence] = archive && loaded![sequence] == .pending ? .sent : .gone }
                        case 2:
                            changes.append(.fail(sequence: sequence, reason: .object(["reason": .string("no")])))
                            if loaded?[sequence] == .pending { loaded![sequence] = .failed }
                        default:
                            changes.append(.retry(sequence: sequence))
                            if loaded?[sequence] == .failed { loaded![sequence] = .pending }
                            queued += 1
                        }
                    }
                    queue.apply(changes)
                }
                checks += 1
                if queue.queuedCommands != queued { failure = "queued \(queue.queuedCommands), expected \(queued)" }
                if queue.inFlightThrough != inFlight { failure = "in flight through \(queue.inFlightThrough), expected \(inFlight)" }
                switch (loaded, queue.commands) {
                case (nil, nil): break
                case (let model?, let commands?):
                    let pending = model.filter { $0.value == .pending }.keys.sorted()
                    let failed = model.filter { $0.value == .failed }.keys.sorted()
                    let sent = model.filter { $0.value == .sent }.keys.sorted()
                    if commands.pending.map(\.sequence) != pending { failure = "pending \(commands.pending.map(\.sequence)), expected \(pending)" }
                    if commands.failed.map(\.sequence) != failed { failure = "failed \(commands.failed.map(\.sequence)), expected \(failed)" }
                    if commands.sent != sent { failure = "sent \(commands.sent), expected \(sent)" }
                default: failure = "commands loaded: \(queue.commands != nil), expected \(loaded != nil)"
                }
                if let failure { Issue.record("seed \(seed), round \(round), step \(step): \(failure)") }
            }
            if failure != nil { break }
        }
        print("OutboxQueueTests seed \(seed): \(checks) steps matched the model")
    }
}

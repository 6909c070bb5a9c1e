@testable import Folio
import FolioCrashSupport
import Testing

/// `QueueView`, the queue as the drain's head reads it between two checkpoints, against a model:
/// the set of pending numbers. Random acknowledgements, failures and retries of listed commands
/// (a retried one goes back before the head's start), and commands enqueued and removed after
/// the listing, from a printed seed (`FOLIO_QUEUE_VIEW_SEED`).
@Suite struct QueueViewTests {
    @Test func thePendingCommandsAreTheModelsInOrder() throws {
        let seed = SplitMix64.seed(replaying: "FOLIO_QUEUE_VIEW_SEED")
        var random = SplitMix64(seed: seed)
        let listed = (1...400).map(UInt64.init).filter { _ in random.index(5) != 0 }
        var view = QueueView(generation: 1, listed: listed)
        var pending = Set(listed)
        var next: UInt64 = 401
        var checks = 0
        for step in 0..<3_000 {
            let sequence: UInt64
            let isPending: Bool
            switch random.index(10) {
            case 0...4:   // the head's first goes (acknowledged), or now and then a later one
                let sorted = pending.sorted()
                guard !sorted.isEmpty else { continue }
                sequence = random.index(4) == 0 ? sorted[random.index(sorted.count)] : sorted[0]
                isPending = false
            case 5, 6:   // a command taken out comes back (a failed one retried)
                sequence = UInt64(random.index(Int(next - 1)) + 1)
                isPending = true
            default:   // a new command, after the listing
                sequence = next
                next += 1
                isPending = true
            }
            let wasListed = listed.contains(sequence)
            guard wasListed || sequence >= 401 else { continue }
            view.set(sequence, pending: isPending, listed: wasListed)
            if isPending { pending.insert(sequence) } else { pending.remove(sequence) }
            if step % 7 == 0 {
                var seen: [UInt64] = []
                let limit = random.index(50) + 1
                try view.forEachPending { sequence in
                    seen.append(sequence)
                    return seen.count < limit
                }
                #expect(seen == Array(pending.sorted().prefix(limit)), "seed \(seed), step \(step)")
                #expect(view.pendingCount == pending.count, "seed \(seed), step \(step)")
                checks += 1
            }
        }
        print("queue view: seed \(seed), \(listed.count) listed, \(next - 401) added, \(checks) heads checked against the model")
    }
}

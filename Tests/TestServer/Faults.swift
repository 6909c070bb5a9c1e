import FolioCrashSupport
import Foundation

/// A misbehaviour the server commits instead of (or on top of) answering a request normally.
///
/// Faults are queued with ``TestServer/inject(_:times:on:where:)`` and consumed in FIFO order by
/// the next requests that match; ``TestServer/randomFaults`` draws them at random instead.
public enum Fault: Sendable, Equatable, CustomStringConvertible {
    /// Close the connection without applying the request or answering it.
    case dropBeforeApplying
    /// Apply the request (and remember its idempotency key), then close the connection without answering.
    case dropAfterApplying
    /// Answer this status without applying the request, with a `Retry-After` header when given.
    ///
    /// The body is `body` when given; otherwise the server's current entity for 409 and 412
    /// (`null` when there is none), `null` for 404 and 410, nothing for 204 and 304, and
    /// `{"error":"injected <status>"}` for every other status.
    case status(Int, retryAfter: String? = nil, body: String? = nil)
    /// Sleep this long, then handle the request normally. The sleep is taken in small steps, so
    /// ``TestServer/stop()`` is not held up by it (a request still sleeping when the server stops
    /// is dropped).
    case delay(seconds: Double)
    /// Apply the request, then answer `200` with a body that is not JSON (`<html>oops</html>`)
    /// and an `ETag` (the real one when the request produced one). The idempotency memory keeps
    /// the real response, so a retry with the same key gets it. A refusal (a non-2xx answer) is
    /// left as it is: a 200 over it would be a server saying the request was applied.
    case garbage
    /// Apply the request, then answer `200` with a valid JSON body of exactly `bytes` bytes
    /// (`{"x":"aaaa…"}`, at least 8 bytes) and an `ETag` (the real one when there is one).
    case oversized(bytes: Int)

    public var description: String {
        switch self {
        case .dropBeforeApplying: return "dropBeforeApplying"
        case .dropAfterApplying: return "dropAfterApplying"
        case .status(let status, let retryAfter, let body):
            return "status(\(status)\(retryAfter.map { ", retryAfter: \($0)" } ?? "")\(body.map { ", body: \($0)" } ?? ""))"
        case .delay(let seconds): return "delay(\(seconds)s)"
        case .garbage: return "garbage"
        case .oversized(let bytes): return "oversized(\(bytes) bytes)"
        }
    }
}

/// Which requests an injected fault may hit.
public enum FaultScope: Sendable, Equatable {
    /// Pushes: `PUT`, `DELETE` and `POST` (custom commands and batches), and the requests inside
    /// a batch. The default.
    case pushes
    /// Pulls: `GET` requests.
    case pulls
    /// Every request.
    case all

    func includes(isPush: Bool) -> Bool {
        switch self {
        case .pushes: return isPush
        case .pulls: return !isPush
        case .all: return true
        }
    }
}

/// Random transient faults: each push request (a whole batch counts as one) suffers one of
/// `faults` with probability `probability`, drawn from a SplitMix64 generator seeded with `seed`.
///
/// Given the seed and the order in which requests arrive, the faults are deterministic.
public struct RandomFaults: Sendable, Equatable {
    /// The seed of the generator. Setting ``TestServer/randomFaults`` restarts the sequence.
    public var seed: UInt64
    /// The probability, in 0...1, that a push request suffers a fault.
    public var probability: Double
    /// The faults to choose from, uniformly.
    public var faults: [Fault]

    /// The transient faults a client must survive: dropped connections before and after applying,
    /// 500, 503 and 429 (both with `Retry-After: 0`) and a non-JSON 200.
    public static let transient: [Fault] = [
        .dropBeforeApplying, .dropAfterApplying, .status(500), .status(503, retryAfter: "0"),
        .status(429, retryAfter: "0"), .garbage,
    ]

    /// Random faults from `faults` (by default ``transient``) with the given probability.
    public init(seed: UInt64, probability: Double, faults: [Fault] = RandomFaults.transient) {
        precondition(!faults.isEmpty, "RandomFaults needs at least one fault to choose from")
        self.seed = seed
        self.probability = probability
        self.faults = faults
    }
}

extension SplitMix64 {
    /// A uniform double in `0..<1`.
    mutating func nextUnit() -> Double { Double(next() >> 11) / Double(UInt64(1) << 53) }
}

/// The queue of injected faults and the random-fault generator.
///
/// Thread safety: every member is guarded by `lock`. The matchers run under that lock, so they
/// must not call back into the server's fault API (``TestServer/inject(_:times:on:where:)``,
/// ``TestServer/randomFaults``); reading the request is all they should do.
final class FaultQueue: @unchecked Sendable {
    private struct Entry {
        let fault: Fault
        var remaining: Int
        let scope: FaultScope
        let matches: @Sendable (Request) -> Bool
    }

    private let lock = NSLock()
    private var entries: [Entry] = []
    private var random: RandomFaults?
    private var generator = SplitMix64(seed: 0)
    private var fired = 0

    func add(_ fault: Fault, times: Int, scope: FaultScope, matches: @escaping @Sendable (Request) -> Bool) {
        precondition(times >= 0, "a fault is injected a non-negative number of times")
        guard times > 0 else { return }
        lock.locked { entries.append(Entry(fault: fault, remaining: times, scope: scope, matches: matches)) }
    }

    /// Consumes and returns the first queued fault that matches `request`, if any.
    func take(for request: Request) -> Fault? {
        lock.locked {
            guard let index = entries.firstIndex(where: { $0.scope.includes(isPush: request.isPush) && $0.matches(request) })
            else { return nil }
            let fault = entries[index].fault
            entries[index].remaining -= 1
            if entries[index].remaining == 0 { entries.remove(at: index) }
            fired += 1
            return fault
        }
    }

    /// Draws a random fault for a push request, when random faults are on.
    func takeRandom() -> Fault? {
        lock.locked {
            guard let random, random.probability > 0 else { return nil }
            guard generator.nextUnit() < random.probability else { return nil }
            let fault = random.faults[Int(generator.next() % UInt64(random.faults.count))]
            fired += 1
            return fault
        }
    }

    var randomFaults: RandomFaults? {
        get { lock.locked { random } }
        set {
            lock.locked {
                random = newValue
                generator = SplitMix64(seed: newValue?.seed ?? 0)
            }
        }
    }

    var pendingCount: Int { lock.locked { entries.reduce(0) { $0 + $1.remaining } } }

    var firedCount: Int { lock.locked { fired } }

    func removeAll() { lock.locked { entries.removeAll() } }

    func resetFiredCount() { lock.locked { fired = 0 } }
}

extension NSLock {
    /// Runs `body` holding the lock.
    func locked<T>(_ body: () throws -> T) rethrows -> T {
        lock()
        defer { unlock() }
        return try body()
    }
}

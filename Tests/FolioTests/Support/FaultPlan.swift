@testable import Folio
import Foundation

/// Decides, step by step, whether an I/O step of the store fails: tests use it to fail, or stop
/// as a crash would, at one chosen step.
final class FaultPlan: @unchecked Sendable {
    enum Mode { case fail, crash }

    private let lock = NSLock()
    private var count = 0
    private var crashed = false
    private(set) var steps: [IOStep] = []
    let target: Int?
    let mode: Mode
    /// Only steps matching this are counted and can fail (default: every disk-changing step).
    let counts: @Sendable (IOStep) -> Bool

    init(failAt target: Int?, mode: Mode = .fail, counting counts: @escaping @Sendable (IOStep) -> Bool = FaultPlan.changesDisk) {
        self.target = target
        self.mode = mode
        self.counts = counts
    }

    static let changesDisk: @Sendable (IOStep) -> Bool = { step in
        if case .read = step { return false }
        return true
    }

    var stepCount: Int { lock.withLock { count } }
    var didCrash: Bool { lock.withLock { crashed } }
    var recorded: [IOStep] { lock.withLock { steps } }

    var hook: IOHook {
        { step throws(FolioError) in
            let failure: FolioError? = self.lock.withLock {
                if self.crashed { return FolioError.system("injected crash: \(step)", path: "-", errno: EIO) }
                guard self.counts(step) else { return nil }
                defer { self.count += 1 }
                self.steps.append(step)
                guard self.count == self.target else { return nil }
                if self.mode == .crash { self.crashed = true }
                return FolioError.system("injected failure: \(step)", path: "-", errno: EIO)
            }
            if let failure { throw failure }
        }
    }
}

@testable import Folio
import Foundation
import Testing

/// Two writer processes and a reader process on one folder at the same time (the children are
/// `folio-crash-child`; CrashTests.swift holds the shared check). The writers take turns through
/// the flock, checkpoint each other's records (a small `checkpointThreshold` makes that happen
/// often), and the reader fetches everything while they do.
@Suite struct TwoProcessTests {
    static let transactions = 1000
    /// Everything must finish in this time, or the children are killed and the test fails.
    static let timeout: Duration = .seconds(120)

    @Test func twoWritersAndAReaderLoseNothing() async throws {
        let root = TemporaryFolder("shared")
        let logs = root.url.deletingLastPathComponent()
        let stopFile = logs.appendingPathComponent("stop-reader")
        let deadline = ContinuousClock.now + Self.timeout
        let start = ContinuousClock.now

        func writer(_ name: String, seed: Int) throws -> CrashChild {
            try CrashChild(["write", root.url.path, "\(seed)", "\(Self.transactions)", "full", name,
                            "--delay-ms", "20", "--threshold-kib", "256"], logs: logs, name: name)
        }
        // The reader is started first, so it is usually reading before the writers commit; it
        // stops when the stop file appears (or after the timeout, as a backstop).
        let reader = try CrashChild(["read", root.url.path, "\(Self.timeout.components.seconds)",
                                     "--until-file", stopFile.path, "--pause-ms", "20"], logs: logs, name: "reader")
        let writers = [try writer("A", seed: 101), try writer("B", seed: 202)]
        defer { for child in writers + [reader] { child.kill() } }   // only if something went wrong

        var finished = true
        for child in writers { finished = await child.waitForExit(before: deadline) && finished }
        _ = FileManager.default.createFile(atPath: stopFile.path, contents: nil)
        finished = await reader.waitForExit(before: min(deadline, .now + .seconds(10))) && finished
        guard finished else {
            Issue.record("the processes did not finish within \(Self.timeout); killed them")
            return
        }

        var acked: [String: Int] = [:]
        for (name, child) in zip(["A", "B"], writers) {
            #expect(child.exitedCleanly, "writer \(name): \(child.errorText)")
            let acks = child.acks
            // Acks come in order, one per transaction, from 1 to the end, without a gap.
            #expect(acks == Array(1...Self.transactions), "writer \(name) acknowledged \(acks.count) transactions, last \(acks.last ?? 0)")
            acked[name] = acks.last ?? 0
        }
        #expect(reader.exitedCleanly, "reader: \(reader.errorText)")
        let summary = reader.lines.last { $0.hasPrefix("reads ") } ?? "no summary"
        let readerViolations = reader.lines.filter { $0.hasPrefix("violation") }
        let reads = Int(summary.split(separator: " ").dropFirst().first ?? "") ?? 0
        #expect(summary.hasSuffix(" violations 0") && readerViolations.isEmpty,
                "the reader saw a partial state: \(summary)\n\(readerViolations.prefix(20).joined(separator: "\n"))")
        #expect(reads >= 5, "the reader did only \(reads) reads: \(summary)")

        let found = await StoreCheck.run(root.url, acked: acked)
        #expect(found.violations.isEmpty, "\(found.violations.prefix(20).joined(separator: "\n"))")
        #expect(found.last == acked, "each writer's last transaction in the store must be its last ack")
        print("two processes: \(acked.values.reduce(0, +)) transactions, \(reads) reads, "
              + "\(found.violations.count + readerViolations.count) violations, \(ContinuousClock.now - start)")
    }
}

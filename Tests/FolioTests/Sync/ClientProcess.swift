import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A running `folio-client-child`. Output goes to files (a kill keeps every line written before
/// it). Swift's crash backtracer is off in the child: a child that traps dies at once instead of
/// symbolicating for many seconds, and is restarted like a killed one.
final class ClientProcess {
    let process = Process()
    let output: URL
    let errors: URL

    init(_ arguments: [String], logs: URL, name: String) throws {
        output = logs.appendingPathComponent("\(name).out")
        errors = logs.appendingPathComponent("\(name).err")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errors.path, contents: nil)
        let out = try FileHandle(forWritingTo: output), err = try FileHandle(forWritingTo: errors)
        defer {
            try? out.close()
            try? err.close()
        }
        process.executableURL = try CrashChild.executable("folio-client-child")
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["SWIFT_BACKTRACE"] = "enable=no"
        process.environment = environment
        process.standardOutput = out
        process.standardError = err
        try process.run()
    }

    /// Waits for the child to exit; false if `deadline` passes first.
    func waitForExit(before deadline: ContinuousClock.Instant) async -> Bool {
        while process.isRunning {
            if ContinuousClock.now >= deadline { return false }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return true
    }

    /// SIGKILL, and wait (at most 10 seconds) until it is reaped; false if it was not.
    func kill() async -> Bool {
        if process.isRunning { sendKill(process.processIdentifier) }
        return await waitForExit(before: .now + .seconds(10))
    }

    /// Whether it died of the SIGKILL the test sent (only once it exited).
    var wasKilled: Bool { process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGKILL }
    /// Whether it died of another signal: a trap.
    var trapped: Bool { process.terminationReason == .uncaughtSignal && process.terminationStatus != SIGKILL }
    var exitedCleanly: Bool { process.terminationReason == .exit && process.terminationStatus == 0 }

    /// Complete lines of output.
    var lines: [String] {
        let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
        return text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
    }

    var errorText: String { (try? String(contentsOf: errors, encoding: .utf8)) ?? "" }
}

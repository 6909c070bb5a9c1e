import Foundation
#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// A child process that runs to its end or is SIGKILLed: its output and errors go to files.
final class ChildProcess: @unchecked Sendable {
    let process: Process
    private let output: URL
    private let errors: URL
    /// Whether our SIGKILL ended it (not its own exit, not another signal).
    private(set) var killedByUs = false

    /// Starts the executable with the arguments.
    init(_ executable: URL, _ arguments: [String], in folder: TemporaryFolder, name: String) throws {
        output = folder.sibling("\(name).out")
        errors = folder.sibling("\(name).err")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errors.path, contents: nil)
        process = Process()
        process.executableURL = executable
        process.arguments = arguments
        // Swift's crash backtracer off: a child that traps dies at once of its signal (which
        // ``trapped`` reads) instead of living on while the backtracer writes its report.
        var environment = ProcessInfo.processInfo.environment
        environment["SWIFT_BACKTRACE"] = "enable=no"
        process.environment = environment
        process.standardOutput = try FileHandle(forWritingTo: output)
        process.standardError = try FileHandle(forWritingTo: errors)
        try process.run()
    }

    var outputText: String { String(decoding: (try? Data(contentsOf: output)) ?? Data(), as: UTF8.self) }
    var errorText: String { String(decoding: (try? Data(contentsOf: errors)) ?? Data(), as: UTF8.self) }

    /// Whether it exited by itself with status 0.
    var exitedCleanly: Bool { !process.isRunning && process.terminationReason == .exit && process.terminationStatus == 0 }
    /// Whether a signal we did not send ended it.
    var trapped: Bool { !process.isRunning && process.terminationReason == .uncaughtSignal && !killedByUs }

    /// Waits at most `seconds` for its end; false if it still runs.
    func waitForExit(seconds: Int) async -> Bool {
        for _ in 0..<(seconds * 100) where process.isRunning {
            do { try await Task.sleep(for: .milliseconds(10)) } catch { break }
        }
        return !process.isRunning
    }

    /// SIGKILLs it if it still runs, and waits for its end.
    ///
    /// A process SIGKILLed in the middle of a sync of a busy disk ends only when the sync returns,
    /// and Foundation notices its end only after that: it is given a minute. Foundation traps if
    /// the termination reason is read before it noticed the end, so it is read only then.
    /// - Returns: Whether our signal ended it (false: it had already ended by itself, or it did
    ///   not end within the minute).
    @discardableResult
    func kill9() async -> Bool {
        guard process.isRunning else { return false }
        kill(process.processIdentifier, SIGKILL)
        guard await waitForExit(seconds: 60) else { return false }
        killedByUs = process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGKILL
        return killedByUs
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
}

@testable import Folio
import FolioCrashSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A running `folio-crash-child`. Its output goes to files, not pipes: a pipe nobody drains
/// would block it, and a file keeps every line written before a kill.
final class CrashChild {
    let process = Process()
    let output: URL
    let errors: URL

    /// - Parameter environment: Variables added to the test's own for the child.
    init(
        _ arguments: [String], logs: URL, name: String, executable: String = "folio-crash-child",
        environment: [String: String] = [:]
    ) throws {
        output = logs.appendingPathComponent("\(name).out")
        errors = logs.appendingPathComponent("\(name).err")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errors.path, contents: nil)
        let out = try FileHandle(forWritingTo: output), err = try FileHandle(forWritingTo: errors)
        defer { try? out.close(); try? err.close() }
        process.executableURL = try Self.executable(executable)
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, added in added }
        }
        process.standardOutput = out
        process.standardError = err
        try process.run()
    }

    /// The executable, in the build products folder: next to the test binary (Linux), or next to
    /// the `.xctest` bundle (macOS, where the bundle is loaded by a helper tool).
    static func executable(_ name: String = "folio-crash-child") throws -> URL {
        let bases = [URL(fileURLWithPath: CommandLine.arguments[0]), Bundle(for: CrashChild.self).bundleURL, Bundle.main.bundleURL]
        var folders: [URL] = []
        for base in bases {
            var folder = base.deletingLastPathComponent()
            for _ in 0..<3 {
                folders.append(folder)
                folder = folder.deletingLastPathComponent()
            }
        }
        if let found = folders.first(where: { FileManager.default.isExecutableFile(atPath: $0.appendingPathComponent(name).path) }) {
            return found.appendingPathComponent(name)
        }
        throw ChildNotBuilt(name: name, searched: folders.map(\.path))
    }

    struct ChildNotBuilt: Error, CustomStringConvertible {
        var name: String
        var searched: [String]
        var description: String {
            "\(name) is not built (run `swift build`; looked in \(searched)); the process tests need it"
        }
    }

    /// SIGKILL now, and reap.
    func kill() {
        if process.isRunning { sendKill(process.processIdentifier) }
        process.waitUntilExit()
    }

    /// Waits for the child to exit by itself; false if `deadline` passes first.
    func waitForExit(before deadline: ContinuousClock.Instant) async -> Bool {
        while process.isRunning {
            if ContinuousClock.now >= deadline { return false }
            try? await Task.sleep(for: .milliseconds(20))
        }
        process.waitUntilExit()
        return true
    }

    /// Waits until the child has opened the store and committed once (a writer). A minute at
    /// most: on a loaded machine starting a child and its first durable commit take seconds.
    func waitForFirstAck(sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while acks.isEmpty {
            try #require(process.isRunning, "the writer stopped: \(errorText)", sourceLocation: sourceLocation)
            try #require(ContinuousClock.now < deadline, "the writer acknowledged nothing in 60 s", sourceLocation: sourceLocation)
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Complete lines of output (a line cut by a kill has no newline and is left out).
    var lines: [String] {
        let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
        return text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
    }

    var acks: [Int] { lines.compactMap { $0.hasPrefix("ack ") ? Int($0.dropFirst(4)) : nil } }
    var errorText: String { (try? String(contentsOf: errors, encoding: .utf8)) ?? "" }
    var exitedCleanly: Bool { process.terminationReason == .exit && process.terminationStatus == 0 }
}

/// SIGKILL (a free function: inside `CrashChild`, `kill` names the method).
func sendKill(_ pid: Int32) { _ = kill(pid, SIGKILL) }

import Foundation
#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif
import Testing

/// A `folio-sync-server` process, started with arguments and waited for until it listens.
final class ServerProcess: @unchecked Sendable {
    let process: Process
    let baseURL: URL
    let errors: URL
    let client: HTTPClient

    /// Starts the server and waits (at most 120 s) for its listening line.
    /// - Parameters:
    ///   - arguments: Its options (`--port 0` is added).
    ///   - environment: Variables added to this process's environment.
    ///   - folder: Where its output files go.
    ///   - name: Their names' prefix.
    init(_ arguments: [String], environment: [String: String] = [:], in folder: TemporaryFolder, name: String) async throws {
        let output = folder.sibling("\(name).out")
        errors = folder.sibling("\(name).err")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errors.path, contents: nil)
        process = Process()
        process.executableURL = try CommandLineTests.executable()
        process.arguments = ["--port", "0"] + arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardOutput = try FileHandle(forWritingTo: output)
        process.standardError = try FileHandle(forWritingTo: errors)
        try process.run()
        let line = try await CommandLineTests.firstLine(of: output, process: process, seconds: 120)
        let errorText = String(decoding: (try? Data(contentsOf: errors)) ?? Data(), as: UTF8.self)
        guard let line, let url = URL(string: String(line.dropFirst("listening on ".count))) else {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            throw ServerProcessError(description: "\(name) did not start: \(errorText)")
        }
        baseURL = url
        client = HTTPClient(baseURL: url)
    }

    /// What it wrote to standard error so far.
    var errorText: String { String(decoding: (try? Data(contentsOf: errors)) ?? Data(), as: UTF8.self) }

    /// SIGKILL, then waits for its end.
    func kill9() async {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        await waitForExit(seconds: 30)
    }

    /// SIGTERM, then waits (at most 60 s) for a clean exit.
    /// - Returns: Whether it exited with status 0.
    @discardableResult
    func stop() async -> Bool {
        guard process.isRunning else { return process.terminationStatus == 0 }
        kill(process.processIdentifier, SIGTERM)
        await waitForExit(seconds: 60)
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        return !process.isRunning && process.terminationReason == .exit && process.terminationStatus == 0
    }

    private func waitForExit(seconds: Int) async {
        for _ in 0..<(seconds * 50) where process.isRunning {
            do { try await Task.sleep(for: .milliseconds(20)) } catch { return }
        }
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
}

struct ServerProcessError: Error, CustomStringConvertible {
    var description: String
}

import Foundation

/// A terminal program (an editor) running in a detached tmux session, driven as a person does:
/// keys in, the screen read back. Each `Terminal` has a tmux server of its own (`tmux -L NAME`),
/// so ending it (``close()``) ends only its own sessions. Every wait polls the screen with a
/// deadline; nothing relies on a fixed sleep alone.
final class Terminal: @unchecked Sendable {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    let tmux: String
    let socket: String
    let session = "editor"
    private var closed = false

    /// Starts `command` (run by tmux's shell, in `folder`) in a 200×50 terminal.
    init(tmux: String, command: String, in folder: URL, environment: [String: String] = [:]) throws {
        self.tmux = tmux
        socket = "folio-\(UUID().uuidString.prefix(12))"
        var arguments = ["new-session", "-d", "-x", "200", "-y", "50", "-s", session, "-c", folder.path]
        for (name, value) in environment.sorted(by: { $0.key < $1.key }) { arguments += ["-e", "\(name)=\(value)"] }
        arguments.append(command)
        try run(arguments)
    }

    deinit { close() }

    /// Ends the tmux server of this terminal (its session and the program in it).
    func close() {
        guard !closed else { return }
        closed = true
        _ = try? run(["kill-server"])
    }

    @discardableResult
    private func run(_ arguments: [String]) throws -> String {
        let result = Shell.run(tmux, ["-L", socket] + arguments)
        guard result.status == 0 else {
            throw Failure(description: "tmux \(arguments.joined(separator: " ")): exit \(result.status): \(result.errors)")
        }
        return result.output
    }

    /// The visible screen, one string per line.
    func screen() -> [String] {
        ((try? run(["capture-pane", "-p", "-t", session])) ?? "").components(separatedBy: "\n")
    }

    /// The last non-empty line of the screen (where editors ask their questions).
    func bottomLine() -> String {
        screen().last { !$0.trimmingCharacters(in: .whitespaces).isEmpty } ?? ""
    }

    /// Whether the program still runs.
    var isRunning: Bool {
        Shell.run(tmux, ["-L", socket, "has-session", "-t", session]).status == 0
    }

    /// Sends keys by tmux name (`Enter`, `C-o`, `M-x`, `Escape`).
    func keys(_ names: String...) throws {
        try run(["send-keys", "-t", session] + names)
    }

    /// Types text literally.
    func type(_ text: String) throws {
        try run(["send-keys", "-t", session, "-l", text])
    }

    /// Polls `condition` every 50 ms until it holds or `seconds` pass.
    @discardableResult
    func wait(_ what: String, seconds: Double = 20, _ condition: () throws -> Bool) throws -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if try condition() { return true }
            Thread.sleep(forTimeInterval: 0.05)
        }
        if try condition() { return true }
        throw Failure(description: "waited \(seconds) s for \(what); the screen ends with: \(screen().suffix(6).joined(separator: " | "))")
    }

    /// Waits until some line of the screen contains `text`.
    func waitForScreen(containing text: String, seconds: Double = 20) throws {
        try wait("the screen to show \(text)", seconds: seconds) { screen().contains { $0.contains(text) } }
    }
}

/// Runs a program to its end, its output collected through files (no pipe can fill up).
enum Shell {
    struct Result {
        var status: Int32
        var output: String
        var errors: String
    }

    static func run(_ executable: String, _ arguments: [String], in folder: URL? = nil,
                    environment: [String: String] = [:], timeout: Double = 120) -> Result {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("folio-shell-\(UUID().uuidString)")
        let out = base.appendingPathExtension("out"), err = base.appendingPathExtension("err")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        defer {
            try? FileManager.default.removeItem(at: out)
            try? FileManager.default.removeItem(at: err)
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let folder { process.currentDirectoryURL = folder }
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        process.standardInput = FileHandle.nullDevice
        guard let outHandle = try? FileHandle(forWritingTo: out), let errHandle = try? FileHandle(forWritingTo: err) else {
            return Result(status: -1, output: "", errors: "cannot open output files")
        }
        defer {
            try? outHandle.close()
            try? errHandle.close()
        }
        process.standardOutput = outHandle
        process.standardError = errHandle
        do { try process.run() } catch {
            return Result(status: -1, output: "", errors: "\(executable) could not start: \(error)")
        }
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.005) }
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
            return Result(status: -2, output: read(out), errors: "timed out after \(timeout) s; " + read(err))
        }
        process.waitUntilExit()
        return Result(status: process.terminationStatus, output: read(out), errors: read(err))
    }

    private static func read(_ url: URL) -> String {
        String(decoding: (try? Data(contentsOf: url)) ?? Data(), as: UTF8.self)
    }
}

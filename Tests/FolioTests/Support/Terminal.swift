import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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
    private var socketPath = ""
    private var closed = false

    /// Starts `command` (run by tmux's shell, in `folder`) in a 200×50 terminal.
    init(tmux: String, command: String, in folder: URL, environment: [String: String] = [:]) throws {
        self.tmux = tmux
        socket = "folio-\(UUID().uuidString.prefix(12))"
        var arguments = ["new-session", "-d", "-x", "200", "-y", "50", "-s", session, "-c", folder.path]
        for (name, value) in environment.sorted(by: { $0.key < $1.key }) { arguments += ["-e", "\(name)=\(value)"] }
        arguments.append(command)
        try run(arguments)
        socketPath = (try? run(["display-message", "-p", "#{socket_path}"]))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
    }

    deinit { close() }

    /// Ends the tmux server of this terminal (its session and the program in it), and removes
    /// its socket.
    func close() {
        guard !closed else { return }
        closed = true
        _ = try? run(["kill-server"])
        if socketPath.hasPrefix("/") { try? FileManager.default.removeItem(atPath: socketPath) }
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

/// Runs a program to its end, its output collected through files (no pipe can fill up). Spawned
/// with `posix_spawn` and reaped with `waitpid`: Foundation's `Process` notices an exit by a socket
/// the child inherits, which a daemon it starts (the tmux server) keeps open for ever.
enum Shell {
    struct Result {
        var status: Int32
        var output: String
        var errors: String
    }

    static func run(
        _ executable: String, _ arguments: [String], in folder: URL? = nil,
        environment: [String: String] = [:], timeout: Double = 120
    ) -> Result {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("folio-shell-\(UUID().uuidString)")
        let out = base.appendingPathExtension("out"), err = base.appendingPathExtension("err")
        defer {
            try? FileManager.default.removeItem(at: out)
            try? FileManager.default.removeItem(at: err)
        }
        // A folder to run in: through the shell, `cd` then `exec`.
        var argv = [executable] + arguments
        if let folder { argv = ["/bin/sh", "-c", "cd \"$0\" && exec \"$@\"", folder.path] + argv }
        var variables = ProcessInfo.processInfo.environment
        for (name, value) in environment { variables[name] = value }
        let envp = variables.map { strdup("\($0.key)=\($0.value)") } + [nil]
        let args = argv.map { strdup($0) } + [nil]
        defer {
            for pointer in envp { free(pointer) }
            for pointer in args { free(pointer) }
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, out.path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, err.path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        // The child starts with no signal blocked and every signal at its default action: the
        // test process blocks and ignores some, and a tmux server that inherited that mask never
        // hears SIGCHLD, SIGHUP or SIGTERM.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t(), all = sigset_t()
        sigemptyset(&none)
        sigfillset(&all)
        sigdelset(&all, SIGKILL)
        sigdelset(&all, SIGSTOP)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, argv[0], &actions, &attributes, args, envp)
        guard spawned == 0 else {
            return Result(status: -1, output: "", errors: "\(executable) could not start: error \(spawned)")
        }
        let deadline = Date().addingTimeInterval(timeout)
        var status: Int32 = 0
        var pause: Double = 0.001
        while true {
            let reaped = waitpid(pid, &status, WNOHANG)
            if reaped == pid { break }
            if reaped < 0, errno != EINTR { return Result(status: -1, output: read(out), errors: "waitpid failed: \(errno)") }
            if Date() > deadline {
                kill(pid, SIGKILL)
                _ = waitpid(pid, &status, 0)
                return Result(status: -2, output: read(out), errors: "timed out after \(timeout) s; " + read(err))
            }
            Thread.sleep(forTimeInterval: pause)
            pause = min(pause * 2, 0.02)
        }
        // Exit status, or 128 + the signal that ended it.
        let code = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return Result(status: code, output: read(out), errors: read(err))
    }

    private static func read(_ url: URL) -> String {
        String(decoding: (try? Data(contentsOf: url)) ?? Data(), as: UTF8.self)
    }
}

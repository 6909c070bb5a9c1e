import Foundation

/// Runs this benchmark's own executable as a child process with a hidden subcommand (see
/// ChildMain.swift): cold reads need a process that has never opened the store, peak memory needs
/// a process that ran one contender only, and counting syscalls needs a process to trace.
enum ChildProcess {
    static var executable: String {
        Bundle.main.executablePath ?? CommandLine.arguments[0]
    }

    /// Runs `executable` with `arguments` (prefixed with `wrapper`, e.g. strace, when given),
    /// waits at most `timeout`, and returns its standard output. A non-zero exit throws.
    /// `environment` sets (a value) or removes (nil) variables of this process's environment.
    static func run(
        _ arguments: [String], wrapper: [String] = [], environment: [String: String?] = [:],
        timeout: Duration = .seconds(600)
    ) throws -> String {
        let command = wrapper.isEmpty ? [executable, "__child"] + arguments : wrapper + [executable, "__child"] + arguments
        let result = try execute(command[0], Array(command.dropFirst()), environment: environment, timeout: timeout)
        guard result.status == 0 else {
            let message = String(decoding: result.errors.prefix(2000), as: UTF8.self)
            throw BenchError("child \(arguments.prefix(2).joined(separator: " ")) exited with status \(result.status): \(message)")
        }
        return String(decoding: result.output, as: UTF8.self)
    }

    /// Runs any program with `arguments`, waits at most `timeout` (then terminates it), and
    /// returns its exit status and everything it wrote. `environment` as for ``run(_:wrapper:environment:timeout:)``.
    static func execute(
        _ program: String, _ arguments: [String], environment: [String: String?] = [:], timeout: Duration = .seconds(600)
    ) throws -> (status: Int32, output: Data, errors: Data) {
        let process = Process()
        if !environment.isEmpty {
            var variables = ProcessInfo.processInfo.environment
            for (name, value) in environment { variables[name] = value }
            process.environment = variables
        }
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        // Read both pipes to the end before waiting, so a chatty child cannot block on a full pipe.
        let group = DispatchGroup()
        nonisolated(unsafe) var errorData = Data()
        group.enter()
        DispatchQueue.global().async {
            errorData = errors.fileHandleForReading.readDataToEndOfFile()
            group.leave()
        }
        let deadline = DispatchTime.now() + .seconds(Int(timeout.components.seconds))
        let watchdog = DispatchWorkItem { if process.isRunning { process.terminate() } }
        DispatchQueue.global().asyncAfter(deadline: deadline, execute: watchdog)
        let data = output.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        process.waitUntilExit()
        watchdog.cancel()
        return (process.terminationStatus, data, errorData)
    }

    /// The last line of a child's output, split on spaces, as numbers.
    static func numbers(_ output: String, expected: Int) throws -> [Double] {
        let line = output.split(separator: "\n").last.map(String.init) ?? ""
        let values = line.split(separator: " ").compactMap { Double($0) }
        guard values.count == expected else { throw BenchError("unexpected child output: \(output.suffix(300))") }
        return values
    }
}

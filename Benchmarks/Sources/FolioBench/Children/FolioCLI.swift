import Foundation

/// The `folio` command line tool of the root package (Sources/FolioCLI), which the outbox group
/// times as a person runs it: a process of its own, its output read to the end. This package
/// cannot depend on an executable, so the tool is built from the repository this benchmark was
/// built from (`swift build -c release --product folio`, incremental: it matches the library the
/// benchmark links), or given with `--folio-cli PATH`.
enum FolioCLI {
    /// The repository root: this file is Benchmarks/Sources/FolioBench/Children/FolioCLI.swift in it.
    static var repository: URL {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<5 { url.deleteLastPathComponent() }
        return url
    }

    /// The tool's path, or why there is none: `given` if it is executable; otherwise built from the
    /// repository (`log` says so first; minutes the first time).
    static func locate(given: String?, log: (String) -> Void) -> Result<String, BenchError> {
        if let given {
            return FileManager.default.isExecutableFile(atPath: given) ? .success(given) : .failure(BenchError("--folio-cli \(given) is not an executable"))
        }
        let root = repository.path
        guard FileManager.default.fileExists(atPath: root + "/Sources/FolioCLI/main.swift") else {
            return .failure(BenchError("the repository this benchmark was built from is not at \(root) (use --folio-cli PATH)"))
        }
        let path = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map { String($0) + "/swift" }
        guard let swift = path.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            return .failure(BenchError("no swift in PATH to build the folio tool (use --folio-cli PATH)"))
        }
        log("building the folio tool: swift build -c release --product folio --package-path \(root)")
        do {
            let build = try ChildProcess.execute(swift, ["build", "-c", "release", "--product", "folio", "--package-path", root], timeout: .seconds(3600))
            guard build.status == 0 else {
                let output = String(decoding: build.output.suffix(1500) + build.errors.suffix(1500), as: UTF8.self)
                return .failure(BenchError("swift build --product folio failed (status \(build.status)): \(output)"))
            }
            let bin = try ChildProcess.execute(swift, ["build", "-c", "release", "--package-path", root, "--show-bin-path"], timeout: .seconds(600))
            let folder = String(decoding: bin.output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            let tool = folder + "/folio"
            guard bin.status == 0, FileManager.default.isExecutableFile(atPath: tool) else {
                return .failure(BenchError("swift build built the folio tool, but it is not at \(tool)"))
            }
            return .success(tool)
        } catch {
            return .failure(BenchError("could not run swift build for the folio tool: \(error)"))
        }
    }

    /// Milliseconds of `tool arguments`, from launch to exit, its output read to the end. It must
    /// exit with 0 and print `expected`.
    static func time(_ tool: String, _ arguments: [String], expecting expected: String) throws -> Double {
        let start = ContinuousClock.now
        let result = try ChildProcess.execute(tool, arguments)
        let elapsed = ContinuousClock.now - start
        let output = String(decoding: result.output, as: UTF8.self)
        guard result.status == 0, output.contains(expected) else {
            throw BenchError(
                "folio \(arguments.joined(separator: " ")) exited with status \(result.status) without printing \"\(expected)\": "
                    + String(decoding: result.errors.prefix(1000), as: UTF8.self) + String(output.prefix(1000)))
        }
        return elapsed.seconds * 1000
    }
}

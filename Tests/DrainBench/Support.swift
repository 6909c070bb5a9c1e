// Helpers of the drain benchmark: the workload, the command line, temporary folders, the
// watchdog, statistics and the machine's description.

import FolioCrashSupport
import Foundation

/// The workload: item `index` of a run, the same values (and so the same JSON bytes) whichever
/// contender sends it. Ids have a fixed width, so every run sends bodies of the same size.
enum Workload {
    /// How many commands a batched Folio request carries.
    static let batchSize = 100
    /// How many items one setup transaction writes.
    static let transactionSize = 100

    /// The id prefix of one run: round and contender letter (`r02c`), so runs never meet on the server.
    static func prefix(round: Int, contender: Contender) -> String {
        "r" + padded(round, 2) + contender.letter
    }

    static func item(_ index: Int, prefix: String) -> SyncItem {
        SyncItem(id: prefix + "-" + padded(index, 7), day: "2026-11-" + padded(index % 30 + 1, 2),
                 value: index, note: "drain benchmark item " + padded(index, 7))
    }

    /// The JSON Folio sends for an entity: JSONEncoder with sorted keys and unescaped slashes.
    static func body(of item: SyncItem) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(item)
    }

    static func padded(_ value: Int, _ width: Int) -> String {
        let text = String(value)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }
}

/// The command line: `[--commands N] [--rounds R]`.
struct Arguments {
    var commands = 5000
    var rounds = 3

    static func parse(_ arguments: [String]) -> Arguments {
        var result = Arguments()
        var index = 1
        while index < arguments.count {
            let name = arguments[index]
            let value = index + 1 < arguments.count ? Int(arguments[index + 1]) : nil
            switch (name, value) {
            case ("--commands", let value?) where value > 0 && value <= 1_000_000:
                result.commands = value
            case ("--rounds", let value?) where value > 0 && value <= 100:
                result.rounds = value
            case ("--help", _), ("-h", _):
                print(usage)
                exit(0)
            default:
                FileHandle.standardError.write(Data("folio-drain-bench: bad argument \(name)\n\(usage)\n".utf8))
                exit(2)
            }
            index += 2
        }
        return result
    }

    static let usage = "usage: folio-drain-bench [--commands N (1...1000000, default 5000)] [--rounds R (1...100, default 3)]"
}

/// The benchmark's temporary folders, under one root that is removed at the end and on failure.
enum Scratch {
    static let root = FileManager.default.temporaryDirectory
        .appendingPathComponent("folio-drain-bench-" + UUID().uuidString, isDirectory: true)

    static func folder(_ name: String) throws -> URL {
        let url = root.appendingPathComponent(name, isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    static func remove(_ url: URL) {
        try? FileManager.default.removeItem(at: url)
    }

    static func removeAll() {
        remove(root)
    }
}

/// Prints `message` to standard error, removes the temporary folders and exits with status 1.
func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("folio-drain-bench: FAILED: \(message)\n".utf8))
    Scratch.removeAll()
    exit(1)
}

/// Ends the process if the whole benchmark takes longer than `limit`: nothing may hang forever.
func startWatchdog(limit: Duration) {
    let seconds = Double(limit.components.seconds)
    let thread = Thread {
        Thread.sleep(forTimeInterval: seconds)
        fail("the benchmark did not finish within \(Int(seconds)) s")
    }
    thread.start()
}

/// The median of non-empty values (the mean of the middle two for an even count).
func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return .nan }
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) * 1e-18 }
}

/// `uname -srm`, or the operating system's version string if `uname` cannot be run.
func machineDescription() -> String {
    for path in ["/usr/bin/uname", "/bin/uname"] where FileManager.default.isExecutableFile(atPath: path) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = ["-srm"]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { continue }
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        if process.terminationStatus == 0 && !text.isEmpty { return text }
    }
    return ProcessInfo.processInfo.operatingSystemVersionString
}

/// Right-aligns `text` in `width` columns (left-aligns when `left`).
func pad(_ text: String, _ width: Int, left: Bool = false) -> String {
    guard text.count < width else { return text }
    let fill = String(repeating: " ", count: width - text.count)
    return left ? text + fill : fill + text
}

func format(_ value: Double, decimals: Int) -> String {
    String(format: "%.\(decimals)f", value)
}

/// Flushes standard output, so each row shows as soon as it is measured even through a pipe.
func flushOutput() {
    fflush(nil)
}

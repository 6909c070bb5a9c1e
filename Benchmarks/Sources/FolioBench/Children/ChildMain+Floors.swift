import Foundation

/// The child commands that measure the machine's floors (Contenders/DiskLimits+Floors.swift),
/// each in a fresh process as the contender it bounds:
///
///     __child floor overwrite PATH COUNT         COUNT × (overwrite 256 B + fdatasync) in the folder
///                                                PATH, prints "wall-µs cpu-µs voluntary involuntary"
///                                                per write
///     __child floor idcalls   PATH COLLECTION    the duplicate-id guarantee's calls on the store at
///                                                PATH, prints "nanoseconds folders files threads"
extension ChildMain {
    /// Runs `command` if it is a floor's; returns its output line, or nil for another command.
    static func machineFloor(_ command: String, kind: String, path: String, _ rest: [String]) throws -> String? {
        guard command == "floor" else { return nil }
        switch kind {
        case "overwrite":
            guard rest.count == 1, let count = Int(rest[0]), count > 0 else { throw BenchError("floor overwrite: bad arguments") }
            let folder = URL(fileURLWithPath: path, isDirectory: true)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            return try DiskLimits.overwriteCost(folder, count: count)
        case "idcalls":
            guard rest.count == 1 else { throw BenchError("floor idcalls: bad arguments") }
            let (elapsed, calls) = try DiskLimits.idGuaranteeCalls(URL(fileURLWithPath: path, isDirectory: true), collection: rest[0])
            return "\(elapsed.nanoseconds) \(calls.folders) \(calls.files) \(calls.threads)"
        default:
            throw BenchError("unknown floor \(kind)")
        }
    }
}

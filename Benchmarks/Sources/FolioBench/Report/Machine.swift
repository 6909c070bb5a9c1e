import Foundation

/// What the benchmark ran on: CPU, cores, kernel, and the file system of the scratch folder.
enum Machine {
    static func describe(scratch: URL) -> [String: String] {
        var result: [String: String] = [:]
        let cpuinfo = FileManager.default.contents(atPath: "/proc/cpuinfo").map { String(decoding: $0, as: UTF8.self) } ?? ""
        result["cpu"] =
            cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }
            .map { $0.split(separator: ":", maxSplits: 1).last.map { $0.trimmingCharacters(in: .whitespaces) } ?? "" } ?? "unknown"
        result["cores"] = String(ProcessInfo.processInfo.activeProcessorCount)
        result["memory"] = String(ProcessInfo.processInfo.physicalMemory >> 20) + " MiB"
        result["os"] = command("/usr/bin/uname", ["-srvm"]) ?? ProcessInfo.processInfo.operatingSystemVersionString
        result["disk"] = command("/bin/df", ["-hT", scratch.path]).flatMap { $0.split(separator: "\n").last.map(String.init) } ?? "unknown"
        #if DEBUG
        result["build"] = "debug"
        #else
        result["build"] = "release"
        #endif
        return result
    }

    private static func command(_ path: String, _ arguments: [String]) -> String? {
        guard FileManager.default.isExecutableFile(atPath: path) else { return nil }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return nil }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return process.terminationStatus == 0 && !text.isEmpty ? text : nil
    }
}

import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// This process's peak resident memory.
enum PeakMemory {
    /// `VmHWM` of /proc/self/status on Linux; `ru_maxrss` elsewhere (bytes on Darwin).
    static func kilobytes() -> Int {
        // Not every system has /proc: reading it failing means falling back to getrusage.
        let status = (FileManager.default.contents(atPath: "/proc/self/status")).map { String(decoding: $0, as: UTF8.self) } ?? ""
        if let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
            let value = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
        {
            return value
        }
        var usage = rusage()
        #if canImport(Glibc)
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        #else
        getrusage(RUSAGE_SELF, &usage)
        #endif
        #if canImport(Darwin)
        return Int(usage.ru_maxrss) / 1024
        #else
        return Int(usage.ru_maxrss)
        #endif
    }
}

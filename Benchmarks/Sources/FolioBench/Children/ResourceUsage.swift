import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// This process's CPU time and context switches so far (all threads): what a phase costs
/// whatever else the machine runs, unlike its wall time.
struct ResourceUsage: Sendable {
    var cpuSeconds: Double
    var voluntarySwitches: Int
    var involuntarySwitches: Int
    var instant: ContinuousClock.Instant

    static func now() -> ResourceUsage {
        var usage = rusage()
        #if canImport(Glibc)
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        #else
        getrusage(RUSAGE_SELF, &usage)
        #endif
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return ResourceUsage(
            cpuSeconds: seconds(usage.ru_utime) + seconds(usage.ru_stime),
            voluntarySwitches: Int(usage.ru_nvcsw), involuntarySwitches: Int(usage.ru_nivcsw),
            instant: .now)
    }

    /// "wall-µs cpu-µs voluntary involuntary" per transaction between `start` and `self`.
    func line(since start: ResourceUsage, transactions: Int) -> String {
        let count = Double(max(transactions, 1))
        return String(
            format: "%.1f %.1f %.2f %.2f", (instant - start.instant).seconds * 1e6 / count,
            (cpuSeconds - start.cpuSeconds) * 1e6 / count,
            Double(voluntarySwitches - start.voluntarySwitches) / count,
            Double(involuntarySwitches - start.involuntarySwitches) / count)
    }
}

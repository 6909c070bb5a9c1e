import FolioCrashSupport
import Foundation

/// Choices made from a seed, so a printed seed replays a randomized test.
extension SplitMix64 {
    /// The seed a randomized test runs from: the environment variable `name` when set (to
    /// replay a printed seed), else a new random one.
    static func seed(replaying name: String) -> UInt64 {
        ProcessInfo.processInfo.environment[name].flatMap { UInt64($0) } ?? UInt64.random(in: 1...UInt64(UInt32.max))
    }

    /// An index below `count`.
    mutating func index(_ count: Int) -> Int { Int.random(in: 0..<count, using: &self) }

    /// A UUID from the next 128 bits.
    mutating func uuid() -> UUID {
        let (a, b) = (next(), next())
        return UUID(
            uuid: withUnsafeBytes(of: (a, b)) { bytes in
                (
                    bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                    bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
                )
            })
    }
}

/// SplitMix64 (Steele, Lea, Flood 2014): a tiny, fast generator whose whole state is one word,
/// so every contender sees the same workload from the same seed, run after run.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniform value in `0..<1`.
    mutating func unit() -> Double {
        Double(next() >> 11) / Double(1 << 53)
    }

    /// A uniform index in `0..<count` (count > 0).
    mutating func index(_ count: Int) -> Int {
        Int(next() % UInt64(count))
    }
}

import Foundation

/// A logarithmic axis: values from `lower` to `upper` (each a 1, 2 or 5 times a power of ten)
/// onto the pixels from `start` to `end` (`end` may be smaller, for a vertical axis that grows
/// upwards).
struct LogScale {
    let lower: Double
    let upper: Double
    let start: Double
    let end: Double

    /// The smallest such axis that holds every positive, finite value of `values`.
    init(covering values: [Double], start: Double, end: Double) {
        let positive = values.filter { $0 > 0 && $0.isFinite }
        lower = Self.step(atMost: positive.min() ?? 1)
        upper = max(Self.step(atLeast: positive.max() ?? 10), lower * 2)
        (self.start, self.end) = (start, end)
    }

    func position(_ value: Double) -> Double {
        let clamped = min(max(value, lower), upper)
        return start + (log10(clamped) - log10(lower)) / (log10(upper) - log10(lower)) * (end - start)
    }

    /// Ticks at 1, 2 and 5 times the powers of ten in the axis, or at the powers of ten alone when it
    /// spans more than two decades.
    var ticks: [Double] {
        let steps: [Double] = log10(upper / lower) > 2.01 ? [1] : [1, 2, 5]
        var ticks: [Double] = []
        var decade = pow(10, floor(log10(lower)))
        while decade <= upper * 1.0001 {
            for step in steps where step * decade >= lower * 0.9999 && step * decade <= upper * 1.0001 { ticks.append(step * decade) }
            decade *= 10
        }
        return ticks
    }

    /// The largest 1, 2 or 5 times a power of ten at most `value`.
    static func step(atMost value: Double) -> Double {
        let decade = pow(10, floor(log10(value)))
        return [5, 2, 1].map { $0 * decade }.first { $0 <= value * 1.0001 } ?? decade
    }

    /// The smallest 1, 2 or 5 times a power of ten at least `value`.
    static func step(atLeast value: Double) -> Double {
        let decade = pow(10, floor(log10(value)))
        return [1, 2, 5, 10].map { $0 * decade }.first { $0 >= value * 0.9999 } ?? decade * 10
    }

    /// A tick's label: "0.05", "1", "20", "1k", "20k".
    static func label(_ value: Double) -> String {
        value >= 1000 ? String(format: "%gk", value / 1000) : String(format: "%g", value)
    }
}

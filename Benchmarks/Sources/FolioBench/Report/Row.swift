import Foundation

/// One line of the result table: a contender measured once per round, usually next to a peer
/// measured in the same round, and the ratio of the two per round.
struct Row: Sendable {
    enum Direction: String, Sendable {
        /// A rate: the ratio is contender ÷ peer and a target reads "at least".
        case higherIsBetter
        /// A time: the ratio is contender ÷ peer and a target reads "at most".
        case lowerIsBetter
    }

    var name: String
    var unit: String
    var direction: Direction
    var contender: String
    var peer: String?
    var values: [Double] = []
    var peerValues: [Double] = []
    /// The ratio the target asks for, or nil for a row that only informs.
    var target: Double?

    var ratios: [Double] { zip(values, peerValues).map { $0 / $1 } }
    var medianRatio: Double { median(ratios) }

    var targetText: String {
        guard let target else { return "" }
        return (direction == .higherIsBetter ? "≥ " : "≤ ") + Format.ratio(target)
    }

    /// Whether the median of the per-round ratios meets the target (nil without one).
    var met: Bool? {
        guard let target, !ratios.isEmpty else { return nil }
        return direction == .higherIsBetter ? medianRatio >= target : medianRatio <= target
    }
}

enum Format {
    static func value(_ value: Double) -> String {
        if value.isNaN { return "—" }
        if value >= 1000 { return String(format: "%.0f", value) }
        if value >= 100 { return String(format: "%.1f", value) }
        if value >= 10 { return String(format: "%.2f", value) }
        return String(format: "%.3f", value)
    }

    static func ratio(_ value: Double) -> String {
        value.isNaN ? "—" : String(format: value >= 10 ? "%.1f×" : "%.2f×", value)
    }

    static func pad(_ text: String, _ width: Int, left: Bool = false) -> String {
        guard text.count < width else { return text }
        let fill = String(repeating: " ", count: width - text.count)
        return left ? text + fill : fill + text
    }
}

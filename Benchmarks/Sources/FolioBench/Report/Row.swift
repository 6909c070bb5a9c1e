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
    /// The ratio (or, for a ``TargetKind/value`` target, the value) the target asks for, or nil
    /// for a row that only informs.
    var target: Double?
    var targetKind = TargetKind.ratio

    /// What a target bounds.
    enum TargetKind: String, Sendable {
        /// The median of the per-round ratios contender ÷ peer.
        case ratio
        /// The median of the contender's own values (a count or a size that has a bound of its
        /// own, whatever the peer does).
        case value
        /// The contender's median minus the peer's, where the peer is the machine's floor for the
        /// same work measured in the same run (context switches a bare `fdatasync` costs): the
        /// target is how far above the floor the contender may be.
        case aboveFloor
    }

    /// How far the contender's median is above the peer's (a floor's), for an ``TargetKind/aboveFloor`` target.
    var aboveFloor: Double { median(values) - median(peerValues) }

    var ratios: [Double] { zip(values, peerValues).map { $0 / $1 } }
    var medianRatio: Double { median(ratios) }

    /// Whether the row holds anything measured (`--only` leaves other rows empty).
    var isMeasured: Bool { !values.isEmpty }

    var targetText: String {
        guard let target else { return "" }
        let bound = direction == .higherIsBetter ? "≥ " : "≤ "
        switch targetKind {
        case .ratio: return bound + Format.ratio(target)
        case .value: return bound + String(format: "%g", target) + (unit == "MiB" || unit == "ms" ? " " + unit : "")
        case .aboveFloor: return bound + "floor + " + String(format: "%g", target)
        }
    }

    /// Whether the median meets the target (nil without one): the median of the per-round ratios,
    /// of the contender's values for a ``TargetKind/value`` target, or the contender's median over
    /// the floor's for an ``TargetKind/aboveFloor`` one.
    var met: Bool? {
        guard let target else { return nil }
        let measured: Double
        switch targetKind {
        case .ratio:
            guard !ratios.isEmpty else { return nil }
            measured = medianRatio
        case .value:
            guard !values.isEmpty else { return nil }
            measured = median(values)
        case .aboveFloor:
            guard !values.isEmpty, !peerValues.isEmpty else { return nil }
            measured = aboveFloor
        }
        return direction == .higherIsBetter ? measured >= target : measured <= target
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

    /// A count with thousands separators: "50,000".
    static func count(_ value: Int) -> String {
        let digits = String(value)
        var out = ""
        for (index, digit) in digits.enumerated() {
            if index > 0, digit != "-", (digits.count - index) % 3 == 0 { out += "," }
            out.append(digit)
        }
        return out
    }

    static func pad(_ text: String, _ width: Int, left: Bool = false) -> String {
        guard text.count < width else { return text }
        let fill = String(repeating: " ", count: width - text.count)
        return left ? text + fill : fill + text
    }
}

import Foundation

/// An SVG document built as text, element after element in drawing order: rectangles, lines,
/// circles, polylines and text. Coordinates are written with one decimal, text is escaped.
struct SVG {
    enum Anchor: String {
        case start, middle, end
    }

    private var elements: [String] = []

    mutating func rect(x: Double, y: Double, width: Double, height: Double, fill: String, opacity: Double = 1) {
        elements.append(
            "<rect x=\"\(n(x))\" y=\"\(n(y))\" width=\"\(n(max(width, 0)))\" height=\"\(n(max(height, 0)))\" fill=\"\(fill)\""
                + (opacity < 1 ? " fill-opacity=\"\(n(opacity, 2))\"" : "") + "/>")
    }

    mutating func line(_ x1: Double, _ y1: Double, _ x2: Double, _ y2: Double, stroke: String, width: Double = 1, dash: String? = nil) {
        elements.append(
            "<line x1=\"\(n(x1))\" y1=\"\(n(y1))\" x2=\"\(n(x2))\" y2=\"\(n(y2))\" stroke=\"\(stroke)\" stroke-width=\"\(n(width))\""
                + (dash.map { " stroke-dasharray=\"\($0)\"" } ?? "") + "/>")
    }

    mutating func circle(_ x: Double, _ y: Double, radius: Double, fill: String, stroke: String = "none", opacity: Double = 1) {
        elements.append(
            "<circle cx=\"\(n(x))\" cy=\"\(n(y))\" r=\"\(n(radius))\" fill=\"\(fill)\" stroke=\"\(stroke)\""
                + (opacity < 1 ? " fill-opacity=\"\(n(opacity, 2))\"" : "") + "/>")
    }

    mutating func polyline(_ points: [(x: Double, y: Double)], stroke: String, width: Double = 2, dash: String? = nil) {
        let list = points.map { "\(n($0.x)),\(n($0.y))" }.joined(separator: " ")
        elements.append(
            "<polyline points=\"\(list)\" fill=\"none\" stroke=\"\(stroke)\" stroke-width=\"\(n(width))\""
                + (dash.map { " stroke-dasharray=\"\($0)\"" } ?? "") + "/>")
    }

    mutating func text(
        _ text: String, _ x: Double, _ y: Double, size: Double = 12, anchor: Anchor = .start, bold: Bool = false,
        fill: String = Chart.ink
    ) {
        elements.append(
            "<text x=\"\(n(x))\" y=\"\(n(y))\" font-size=\"\(n(size))\" fill=\"\(fill)\""
                + (anchor == .start ? "" : " text-anchor=\"\(anchor.rawValue)\"") + (bold ? " font-weight=\"bold\"" : "")
                + ">\(Self.escape(text))</text>")
    }

    /// The whole document, on a white background.
    func document(width: Double, height: Double) -> String {
        let open =
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(n(width))\" height=\"\(n(height))\" viewBox=\"0 0 \(n(width)) \(n(height))\""
            + " font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">"
        let background = "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>"
        return ([open, background] + elements + ["</svg>", ""]).joined(separator: "\n")
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }

    private func n(_ value: Double, _ decimals: Int = 1) -> String {
        String(format: "%.\(decimals)f", value)
    }
}

internal import Foundation

/// How the engine treats an HTTP status (PROTOCOL.md, "Responses to a push").
enum HTTPResponseClass: Equatable {
    case success
    case conflict
    case transient
    case unauthorized
    /// 301, 302, 303, 307, 308: see ``HTTPTransport``'s redirect rules.
    case redirect
    case permanent

    init(status: Int) {
        switch status {
        case 200..<300: self = .success
        case 301, 302, 303, 307, 308: self = .redirect
        case 409, 412: self = .conflict
        case 401: self = .unauthorized
        case 408, 425, 429, 500..<600: self = .transient
        default: self = .permanent
        }
    }
}

enum HTTPHeaders {
    /// The version an `ETag` header holds: `"7"`, `W/"7"` and `7` all give `7`.
    static func version(fromETag tag: String?) -> String? {
        guard var text = tag?.trimmingCharacters(in: .whitespaces), !text.isEmpty else { return nil }
        if text.hasPrefix("W/") { text.removeFirst(2) }
        if text.count >= 2, text.hasPrefix("\""), text.hasSuffix("\"") { text = String(text.dropFirst().dropLast()) }
        return text.isEmpty ? nil : text
    }

    /// `Retry-After` as a duration: delay-seconds or an HTTP date (RFC 9110). Nil if absent or
    /// unreadable; never negative.
    static func retryAfter(_ value: String?, now: Date = Date()) -> Duration? {
        guard let text = value?.trimmingCharacters(in: .whitespaces), !text.isEmpty else { return nil }
        if let seconds = Int64(text) { return .seconds(max(0, seconds)) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = formatter.date(from: text) else { return nil }
        return .milliseconds(max(0, Int64(date.timeIntervalSince(now) * 1000)))
    }

    /// A bounded, printable excerpt of a response body, for reason files and logs.
    static func excerpt(_ body: Data, limit: Int = 1000) -> String {
        let prefix = body.prefix(limit)
        var text = String(decoding: prefix, as: UTF8.self)
        text = String(text.unicodeScalars.map { $0.value < 0x20 && $0 != "\n" && $0 != "\t" ? "?" : Character($0) })
        return body.count > limit ? text + "…" : text
    }

    /// One path segment, percent-encoded: everything outside the unreserved set.
    static func segment(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return out
    }
}

extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}

/// The names the server accepts: entity ids and partition keys as FORMAT.md defines them, so no
/// name from a request can address a path outside the data folder.
enum Names {
    /// Checks an entity id: 1–256 bytes of UTF-8 without control characters, `/` or `\`, and
    /// not `.` or `..`.
    /// - Throws: ``RequestError`` (400) naming `field`.
    static func validateID(_ id: String, field: String = "id") throws(RequestError) {
        let bytes = id.utf8
        guard !bytes.isEmpty, bytes.count <= 256 else {
            throw RequestError(400, "an id is 1–256 bytes of UTF-8; this one has \(bytes.count)", field: field)
        }
        guard id != ".", id != ".." else { throw RequestError(400, "\"\(id)\" is not a valid id", field: field) }
        for byte in bytes where byte < 0x20 || byte == 0x7F || byte == UInt8(ascii: "/") || byte == UInt8(ascii: "\\") {
            throw RequestError(400, "an id cannot contain control characters, \"/\" or \"\\\": \(id.debugDescription)", field: field)
        }
    }

    /// Whether the text is a real calendar day `YYYY-MM-DD` (years 0001–9999).
    static func isDay(_ text: String) -> Bool {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
            let year = digits(parts[0]), let month = digits(parts[1]), let day = digits(parts[2]),
            year >= 1, (1...12).contains(month)
        else { return false }
        return (1...daysIn(month: month, year: year)).contains(day)
    }

    /// Whether the text is a month `YYYY-MM` (years 0001–9999).
    static func isMonth(_ text: String) -> Bool {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].count == 4, parts[1].count == 2,
            let year = digits(parts[0]), let month = digits(parts[1])
        else { return false }
        return year >= 1 && (1...12).contains(month)
    }

    private static func digits(_ text: Substring) -> Int? {
        guard text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        return Int(text)
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }
}

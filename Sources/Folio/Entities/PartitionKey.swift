internal import Foundation

/// A validated partition key: `YYYY-MM-DD` for a day, `YYYY-MM` for a month, empty for an
/// unpartitioned collection. File names are built only from these and from validated collection
/// names, so no key can address a path outside the store.
struct PartitionKey: Hashable, Sendable, Comparable {
    let text: String

    static let whole = PartitionKey(text: "")

    static func < (a: PartitionKey, b: PartitionKey) -> Bool { a.text < b.text }

    private static func digits(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int(text)
    }

    static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Parses `YYYY-MM-DD` strictly: four-digit year 0001–9999, a real calendar date.
    static func day(parsing text: String) -> PartitionKey? {
        // Byte by byte (every entity written passes here): ten ASCII bytes, `-` at 4 and 7.
        guard text.utf8.count == 10 else { return nil }
        var year = 0, month = 0, day = 0, index = 0
        for byte in text.utf8 {
            if index == 4 || index == 7 {
                guard byte == UInt8(ascii: "-") else { return nil }
            } else {
                guard byte >= 0x30 && byte <= 0x39 else { return nil }
                let digit = Int(byte - 0x30)
                if index < 4 { year = year * 10 + digit } else if index < 7 { month = month * 10 + digit } else { day = day * 10 + digit }
            }
            index += 1
        }
        guard year >= 1, (1...12).contains(month), day >= 1, day <= daysInMonth(year: year, month: month) else { return nil }
        return PartitionKey(text: text)
    }

    /// Parses `YYYY-MM` strictly.
    static func month(parsing text: String) -> PartitionKey? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard text.utf8.count == 7, parts.count == 2, parts[0].count == 4, parts[1].count == 2,
            let year = digits(parts[0]), let month = digits(parts[1]), year >= 1, (1...12).contains(month)
        else { return nil }
        return PartitionKey(text: text)
    }

    static func validDay(_ text: String) throws(FolioError) -> PartitionKey {
        guard let key = day(parsing: text) else {
            throw FolioError(.invalidName, "\"\(text.prefix(40))\" is not a day in the form YYYY-MM-DD")
        }
        return key
    }

    static func validMonth(_ text: String) throws(FolioError) -> PartitionKey {
        guard let key = month(parsing: text) else {
            throw FolioError(.invalidName, "\"\(text.prefix(40))\" is not a month in the form YYYY-MM")
        }
        return key
    }

    static func validMonth(fromDayOrMonth text: String) throws(FolioError) -> PartitionKey {
        if text.utf8.count == 10 { return try validMonth(String(validDay(text).text.prefix(7))) }
        return try validMonth(text)
    }

    static func day(of date: Date, in timeZone: TimeZone) -> PartitionKey {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let parts = calendar.dateComponents([.year, .month, .day], from: date)
        let text =
            String(parts.year ?? 1).leftPadded(to: 4) + "-" + String(parts.month ?? 1).leftPadded(to: 2) + "-"
            + String(parts.day ?? 1).leftPadded(to: 2)
        return PartitionKey(text: text)
    }

    /// The month folder of a day key (`2026-11` for `2026-11-22`).
    var month: String { String(text.prefix(7)) }
}

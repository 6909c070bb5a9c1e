internal import Foundation

/// The dates Folio writes (`2026-11-22T09:30:00.828Z`, UTC, milliseconds; also without the
/// fraction), parsed by hand. `Date.ISO8601FormatStyle` costs microseconds per date, and a query
/// over years of data decodes hundreds of thousands of them. Anything else (another time zone, more
/// digits, an impossible day, a year before 1600, where the format style counts in the Julian
/// calendar) is not handled here: `nil` sends it to the format style.
enum ISO8601Date {
    static func parse(_ text: String) -> Date? {
        var text = text
        return text.withUTF8 { parse(bytes: $0) }
    }

    private static func parse(bytes: UnsafeBufferPointer<UInt8>) -> Date? {
        guard bytes.count == 20 || bytes.count == 24, bytes[bytes.count - 1] == UInt8(ascii: "Z"),
            bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"), bytes[10] == UInt8(ascii: "T"),
            bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":")
        else { return nil }
        func number(_ start: Int, _ count: Int) -> Int? {
            var value = 0
            for index in start..<(start + count) {
                let digit = Int(bytes[index]) - 48
                guard digit >= 0 && digit <= 9 else { return nil }
                value = value * 10 + digit
            }
            return value
        }
        guard let year = number(0, 4), let month = number(5, 2), let day = number(8, 2),
            let hour = number(11, 2), let minute = number(14, 2), let second = number(17, 2),
            year >= 1600, (1...12).contains(month), day >= 1, day <= PartitionKey.daysInMonth(year: year, month: month),
            hour < 24, minute < 60, second < 60
        else { return nil }
        var milliseconds = 0
        if bytes.count == 24 {
            guard bytes[19] == UInt8(ascii: "."), let fraction = number(20, 3) else { return nil }
            milliseconds = fraction
        }
        // Days since 1970-01-01 in the proleptic Gregorian calendar (H. Hinnant's days_from_civil).
        let shifted = month <= 2 ? year - 1 : year
        let era = shifted / 400
        let yearOfEra = shifted - era * 400
        let dayOfYear = (153 * ((month + 9) % 12) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        let seconds = days * 86_400 + hour * 3_600 + minute * 60 + second
        return Date(timeIntervalSince1970: Double(seconds) + Double(milliseconds) / 1000)
    }

    /// `2026-11-22T09:30:00.828Z` for a whole number of milliseconds since 1970, written by
    /// hand for years 1600 to 9999 (Foundation's format style costs microseconds per date, and an
    /// import encodes two per entity); nil outside them, where the caller uses the format style.
    static func format(milliseconds: Int64) -> String? {
        // 1600-01-01 and 10000-01-01, in milliseconds since 1970.
        guard milliseconds >= -11_676_096_000_000, milliseconds < 253_402_300_800_000 else { return nil }
        var seconds = milliseconds / 1000
        var fraction = milliseconds % 1000
        if fraction < 0 {
            fraction += 1000
            seconds -= 1
        }
        var days = seconds / 86_400
        var time = seconds % 86_400
        if time < 0 {
            time += 86_400
            days -= 1
        }
        // The civil date of a day count (H. Hinnant's civil_from_days).
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        var bytes = [UInt8](repeating: 0, count: 24)
        func put(_ value: Int64, at start: Int, digits: Int) {
            var rest = value
            for index in stride(from: start + digits - 1, through: start, by: -1) {
                bytes[index] = UInt8(48 + rest % 10)
                rest /= 10
            }
        }
        put(year, at: 0, digits: 4)
        put(month, at: 5, digits: 2)
        put(day, at: 8, digits: 2)
        put(time / 3600, at: 11, digits: 2)
        put(time / 60 % 60, at: 14, digits: 2)
        put(time % 60, at: 17, digits: 2)
        put(fraction, at: 20, digits: 3)
        for (index, byte) in [(4, "-"), (7, "-"), (10, "T"), (13, ":"), (16, ":"), (19, "."), (23, "Z")] as [(Int, Unicode.Scalar)] {
            bytes[index] = UInt8(ascii: byte)
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

internal import Foundation

/// Which rows of a field index column may hold a flag, found on the column's bytes: the filter of
/// a query like `… && !$0.done` then reads and evaluates only those rows (``FieldFilter/requirements``).
///
/// A row is ruled out only when its value is exactly the other literal (`true` where `false` is
/// required): the filter would find that boolean and the predicate fail. Any other value (`null`,
/// a number, a string, one with spaces around it) is kept, read and tested as usual.
extension FieldScanner {
    /// For each value of the `[<value>,…]` line, false when it is exactly `!flag`'s literal, true
    /// otherwise; nil when the line is not such a line with `count` values.
    ///
    /// A line without a quote holds no string, so its commas separate its values: it is split
    /// with `memchr`, not walked value by value.
    static func rows(_ line: ArraySlice<UInt8>, mayBe flag: Bool, count: Int) -> [Bool]? {
        let rows = line.withUnsafeBufferPointer { buffer in
            unquotedRows(buffer, mayBe: flag, count: count) ?? values(line)?.map { $0 != .bool(!flag) }
        }
        return rows?.count == count ? rows : nil
    }

    private static func unquotedRows(_ line: UnsafeBufferPointer<UInt8>, mayBe flag: Bool, count: Int) -> [Bool]? {
        guard let base = line.baseAddress, line.count >= 2, line.first == UInt8(ascii: "["), line.last == UInt8(ascii: "]"),
            memchr(base, Int32(UInt8(ascii: "\"")), line.count) == nil
        else { return nil }
        let end = line.count - 1   // the closing bracket
        guard end > 1 else { return count == 0 ? [] : nil }
        let other: StaticString = flag ? "false" : "true"
        var rows: [Bool] = []
        rows.reserveCapacity(count)
        var start = 1
        while true {
            let comma = memchr(base + start, Int32(UInt8(ascii: ",")), end - start).map { UnsafeRawPointer(base).distance(to: UnsafeRawPointer($0)) } ?? end
            let length = comma - start
            rows.append(!(length == other.utf8CodeUnitCount && memcmp(base + start, other.utf8Start, length) == 0))
            guard comma < end, rows.count <= count else { break }
            start = comma + 1
        }
        return rows
    }
}

internal import Foundation

/// Which rows of a field index column may hold a word, found on the column's bytes: the filter of a
/// query like `title.contains("milk") && …` then reads and evaluates only those rows, not a
/// `String` per title of ten years (``FieldFilter/requirements``).
///
/// A row is ruled out only when its value is certainly a string without the word: written without
/// escapes, and plain text (``TextSearch/plainBytes(_:)``: ASCII without a carriage return), where
/// a `Character` is one byte and so searching the bytes answers what the `Character` search of
/// `contains` answers. Any other row (an escape, other text, `null`, a number) is kept, read and
/// tested as usual.
extension FieldScanner {
    /// For each value of the `[<value>,…]` line, false when it is certainly a string without
    /// `word` (plain text, never empty), true otherwise; nil when the line is not such a line
    /// with `count` values.
    ///
    /// The usual column, strings without escapes, is not walked value by value: the word's
    /// occurrences are found with `memchr` on its rarest byte, and each is placed in its row by counting the quotes
    /// before it (with no backslash in the line, every quote opens or closes a string).
    static func rows(_ line: ArraySlice<UInt8>, mayContain word: SearchWord, count: Int) -> [Bool]? {
        line.withUnsafeBufferPointer { buffer in
            let rows = quotedRows(buffer, mayContain: word, count: count) ?? rowsWalked(buffer, mayContain: word)
            return rows?.count == count ? rows : nil
        }
    }

    /// Whether a `["…",…]` line holds `count` strings: without a backslash, when its quotes pair
    /// up `count` times; otherwise when it reads as such a line.
    static func holdsStrings(_ line: ArraySlice<UInt8>, count: Int) -> Bool {
        let census = line.withUnsafeBufferPointer { ByteCensus.count($0, 0..<$0.count) }
        guard census.backslashes == 0 else { return stringRanges(line)?.count == count }
        return census.quotes == 2 * count && line.first == UInt8(ascii: "[") && line.last == UInt8(ascii: "]")
    }

    /// The rows of a line whose values are all strings without escapes; nil for another line.
    private static func quotedRows(_ line: UnsafeBufferPointer<UInt8>, mayContain word: SearchWord, count: Int) -> [Bool]? {
        guard let base = line.baseAddress, line.count >= 2, line.first == UInt8(ascii: "["), line.last == UInt8(ascii: "]") else { return nil }
        let (bits, quotes, backslashes) = ByteCensus.count(line, 0..<line.count)
        // Every value a string, none with an escape: each string is a pair of quotes.
        guard backslashes == 0, quotes == 2 * count else { return nil }
        var rows = [Bool](repeating: false, count: count)
        if bits >= 0x80 || memchr(base, 0x0D, line.count) != nil {
            // Other text somewhere: its rows are kept (a quote ends each string).
            var quote = 0
            for byte in line {
                if byte == UInt8(ascii: "\"") {
                    quote += 1
                } else if byte >= 0x80 || byte == 0x0D {
                    guard quote % 2 == 1 else { return nil }
                    rows[quote / 2] = true
                }
            }
        }
        // A quote in the word is never inside such a string: no row holds it.
        guard !word.bytes.contains(UInt8(ascii: "\"")) else { return rows }
        var from = 0, quote = 0, counted = 0
        while let at = TextSearch.firstOccurrence(of: word, in: line, from: from) {
            quote += ByteCensus.count(line, counted..<at).quotes
            counted = at
            // Inside a string (an odd number of quotes before it), and the word holds no quote.
            if quote % 2 == 1 { rows[quote / 2] = true }
            from = at + 1
        }
        return rows
    }
}

/// Counts of bytes in a buffer, eight bytes at a time (in a `UInt64`).
enum ByteCensus {
    /// Over `range` of `bytes`: every byte's bits or-ed together, how many quotes, how many
    /// backslashes.
    static func count(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> (bits: UInt8, quotes: Int, backslashes: Int) {
        guard let base = bytes.baseAddress else { return (0, 0, 0) }
        let raw = UnsafeRawPointer(base)
        var bits: UInt64 = 0
        var quotes = 0, backslashes = 0
        var index = range.lowerBound
        while index + 8 <= range.upperBound {
            let word = raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            bits |= word
            quotes += matches(word, 0x2222_2222_2222_2222)
            backslashes += matches(word, 0x5C5C_5C5C_5C5C_5C5C)
            index += 8
        }
        var all = UInt8(truncatingIfNeeded: bits | bits >> 32 | bits >> 16 | bits >> 8 | bits >> 24 | bits >> 40 | bits >> 48 | bits >> 56)
        while index < range.upperBound {
            let byte = bytes[index]
            all |= byte
            if byte == UInt8(ascii: "\"") { quotes += 1 }
            if byte == UInt8(ascii: "\\") { backslashes += 1 }
            index += 1
        }
        return (all, quotes, backslashes)
    }

    /// How many of the word's eight bytes equal the byte repeated in `pattern`: the high bit of
    /// each byte of `found` is set exactly where the xor is zero.
    @inline(__always)
    private static func matches(_ word: UInt64, _ pattern: UInt64) -> Int {
        let x = word ^ pattern
        let low: UInt64 = 0x7F7F_7F7F_7F7F_7F7F
        let found = ~(((x & low) &+ low) | x | low)
        return found.nonzeroBitCount
    }
}

/// A word searched for as bytes (never empty), with the byte `memchr` looks for: its least
/// frequent in English text, so a search stops rarely to compare. Chosen once per word.
struct SearchWord: Sendable, Equatable {
    let bytes: [UInt8]
    let pivot: Int

    /// Nil for no bytes (which every text contains).
    init?(_ bytes: [UInt8]) {
        guard let pivot = bytes.indices.min(by: { Self.rank(bytes[$0]) < Self.rank(bytes[$1]) }) else { return nil }
        (self.bytes, self.pivot) = (bytes, pivot)
    }

    /// How often a byte is met in English text, higher for more often (a rough order: a space,
    /// then lowercase letters by frequency; anything else counts as rare).
    private static func rank(_ byte: UInt8) -> Int {
        if byte == UInt8(ascii: " ") { return 100 }
        guard let index = frequentLetters.firstIndex(of: byte) else { return 0 }
        return 99 - index
    }

    private static let frequentLetters = Array("etaoinshrdlcumwfgypbvkjxqz".utf8)
}

extension TextSearch {
    /// Where `word` first occurs in `text` at or after `from`.
    static func firstOccurrence(of word: SearchWord, in text: UnsafeBufferPointer<UInt8>, from: Int) -> Int? {
        guard let textBase = text.baseAddress else { return nil }
        let pivot = word.pivot, length = word.bytes.count, pivotByte = Int32(word.bytes[pivot])
        return word.bytes.withUnsafeBufferPointer { bytes -> Int? in
            guard let wordBase = bytes.baseAddress else { return nil }
            var start = from + pivot
            let end = text.count - (length - pivot - 1)   // past the last place the pivot can be
            while start < end {
                guard let found = memchr(textBase + start, pivotByte, end - start) else { return nil }
                let at = UnsafeRawPointer(textBase).distance(to: UnsafeRawPointer(found)) - pivot
                if memcmp(textBase + at, wordBase, length) == 0 { return at }
                start = at + pivot + 1
            }
            return nil
        }
    }

    /// Whether `word` occurs in `text`.
    static func contains(_ text: UnsafeBufferPointer<UInt8>, _ word: SearchWord) -> Bool {
        firstOccurrence(of: word, in: text, from: 0) != nil
    }
}

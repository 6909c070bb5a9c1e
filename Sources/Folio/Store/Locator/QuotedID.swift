internal import Foundation

/// An id as a field index's ids line quotes it, hashed as bytes in one go (an `ArraySlice`'s own
/// hash feeds the hasher a byte at a time).
struct QuotedID: Hashable {
    let bytes: ArraySlice<UInt8>

    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
    }

    func hash(into hasher: inout Hasher) {
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
    }

    static func == (lhs: QuotedID, rhs: QuotedID) -> Bool {
        lhs.bytes.elementsEqual(rhs.bytes)
    }

    /// Whether a line holds a backslash (an escaped id, compared as a string instead).
    static func hasEscape(_ line: ArraySlice<UInt8>) -> Bool {
        line.withUnsafeBytes { bytes in
            guard let base = bytes.baseAddress else { return false }
            return memchr(base, Int32(UInt8(ascii: "\\")), bytes.count) != nil
        }
    }
}

/// A 64-bit FNV-1a hash of a file's bytes, written as 16 lowercase hex digits: names the versions
/// Folio keeps (`.folio/versions/`) and tells whether a file still holds the bytes Folio read.
/// Not cryptographic: it tells Folio's own versions apart, it does not defend against forgery.
struct ContentHash: Hashable, Sendable, CustomStringConvertible {
    let value: UInt64

    init(_ bytes: [UInt8]) {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        value = hash
    }

    /// Parses 16 lowercase hex digits.
    init?(hex: Substring) {
        guard hex.count == 16, hex.allSatisfy({ $0.isHexDigit && !$0.isUppercase }), let value = UInt64(hex, radix: 16) else { return nil }
        self.value = value
    }

    var description: String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}

internal import Foundation

/// Validation of the names that become paths or keys. Nothing user-supplied reaches a path
/// without passing here.
enum Names {
    static let reservedCollections: Set<String> = ["folio", "outbox"]
    static let maximumIDBytes = 256

    /// A collection name: an ASCII letter, then letters, digits, `_` or `-`; at most 64 characters;
    /// not reserved (compared case-insensitively, for case-insensitive file systems).
    static func validateCollection(_ name: String) throws(FolioError) {
        let bytes = Array(name.utf8)
        func isLetter(_ b: UInt8) -> Bool { (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) }
        func isAllowed(_ b: UInt8) -> Bool { isLetter(b) || (b >= 0x30 && b <= 0x39) || b == 0x5F || b == 0x2D }
        guard let first = bytes.first, isLetter(first), bytes.count <= 64, bytes.allSatisfy(isAllowed) else {
            throw FolioError(
                .invalidName,
                "collection name \"\(String(name.prefix(80)))\" is not allowed: use 1–64 ASCII letters, digits, '_' or '-', starting with a letter")
        }
        guard !reservedCollections.contains(name.lowercased()) else {
            throw FolioError(.invalidName, "collection name \"\(name)\" is reserved")
        }
    }

    /// An entity id: 1–256 bytes of UTF-8, no control characters, no `/` or `\`, not `.` or `..`.
    static func validateID(_ id: String) throws(FolioError) {
        let bytes = id.utf8
        // Built only for an error: every id of every file read passes here.
        var shown: String { String(id.unicodeScalars.prefix(60).map { $0.value < 0x20 || $0.value == 0x7F ? "?" : Character($0) }) }
        guard !bytes.isEmpty else { throw FolioError(.invalidName, "an entity id must not be empty") }
        guard bytes.count <= maximumIDBytes else {
            throw FolioError(.invalidName, "entity id \"\(shown)…\" is \(bytes.count) bytes long; the limit is \(maximumIDBytes)")
        }
        guard id != ".", id != "..",
            !bytes.contains(where: { $0 < 0x20 || $0 == 0x7F || $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "\\") })
        else {
            throw FolioError(
                .invalidName, "entity id \"\(shown)\" is not allowed: ids must not contain control characters, '/' or '\\', nor be '.' or '..'", entityID: shown
            )
        }
        // Swift compares strings by canonical equivalence, so "café" precomposed and decomposed
        // would be one key in every dictionary and silently replace each other. Ids are kept as
        // exact bytes, and only the normalized (NFC) form of a text is a valid id: two distinct
        // valid ids are then never canonically equivalent.
        guard isNFC(id) else {
            throw FolioError(
                .invalidName,
                "entity id \"\(shown)\" (UTF-8 \(hexBytes(id))) is not in Unicode NFC: ids are compared as exact bytes, and this one would collide with its NFC form \"\(id.precomposedStringWithCanonicalMapping)\"; normalize ids with `precomposedStringWithCanonicalMapping`",
                entityID: shown)
        }
    }

    /// Whether `text` is in Unicode Normalization Form C, byte for byte.
    static func isNFC(_ text: String) -> Bool {
        if text.utf8.allSatisfy({ $0 < 0x80 }) { return true }
        return Array(text.precomposedStringWithCanonicalMapping.utf8) == Array(text.utf8)
    }

    /// The UTF-8 bytes of `text` in hex (`63 61 66 C3 A9`), to show two texts that print alike.
    static func hexBytes(_ text: String) -> String {
        text.utf8.prefix(64).map { String($0, radix: 16, uppercase: true).leftPadded(to: 2) }.joined(separator: " ")
    }
}

public import Foundation

/// A tokens file: which bearer token speaks for which owner.
///
/// One line per token, `<owner> <token>`; blank lines and lines starting with `#` are skipped.
/// An owner is 1–64 of `A–Z a–z 0–9 . _ -` (not starting with a dot); a token is 8 or more
/// visible characters and appears once. An owner may have several tokens (one per device, say).
///
/// ```
/// # owner   token
/// alice     3f9c2d0e8b7a41c6
/// bob       b41e77a0c2d94f18
/// ```
public enum OwnerTokens {
    /// Reads a tokens file.
    /// - Parameter url: The file.
    /// - Returns: Owners by token, for ``SyncServer/Configuration/ownerTokens``.
    /// - Throws: ``OwnerTokensError`` naming the file and line (never a token).
    public static func read(_ url: URL) throws -> [String: String] {
        let text: String
        do {
            text = try String(contentsOf: url, encoding: .utf8)
        } catch {
            throw OwnerTokensError(description: "\(url.path): cannot be read as UTF-8 text: \(error.localizedDescription)")
        }
        return try parse(text, source: url.path)
    }

    /// Parses the text of a tokens file (see ``read(_:)``).
    public static func parse(_ text: String, source: String) throws -> [String: String] {
        var tokens: [String: String] = [:]
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            guard !line.isEmpty, !line.hasPrefix("#") else { continue }
            let place = "\(source):\(index + 1)"
            let parts = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard parts.count == 2 else { throw OwnerTokensError(description: "\(place): a line is \"<owner> <token>\"") }
            guard Owner(String(parts[0])) != nil else {
                throw OwnerTokensError(description: "\(place): an owner is 1-64 of A-Z a-z 0-9 . _ - (not starting with a dot)")
            }
            let token = String(parts[1])
            guard token.utf8.count >= 8, token.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
                throw OwnerTokensError(description: "\(place): a token is 8 or more visible ASCII characters")
            }
            guard tokens[token] == nil else { throw OwnerTokensError(description: "\(place): this token is already given to an owner") }
            tokens[token] = String(parts[0])
        }
        guard !tokens.isEmpty else { throw OwnerTokensError(description: "\(source): names no owner") }
        return tokens
    }
}

/// A tokens file that cannot be used.
public struct OwnerTokensError: Error, CustomStringConvertible {
    public var description: String
}

import Foundation

/// The versions of an `If-Match` or `If-None-Match` header.
struct EntityTagList: Sendable, Equatable {
    /// Versions without quotes or `W/`; `*` kept as is.
    var versions: [String]

    /// Parses `"7"`, `W/"7", "8"` or `*`.
    /// - Throws: ``RequestError`` (400, naming the header) when an item is empty.
    init(_ header: String, name: String) throws(RequestError) {
        var versions: [String] = []
        for item in header.split(separator: ",", omittingEmptySubsequences: false) {
            var value = item.trimmingCharacters(in: .whitespaces)
            if value.hasPrefix("W/") { value.removeFirst(2) }
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = String(value.dropFirst().dropLast()) }
            guard !value.isEmpty else { throw RequestError(400, "\(name) holds an empty entity tag: \(header)", field: name) }
            versions.append(value)
        }
        self.versions = versions
    }

    /// Whether the list is `*` or names this version.
    func matches(_ version: Int64) -> Bool {
        versions.contains("*") || versions.contains(String(version))
    }
}

internal import Foundation

/// A file in a store's data folders that is not data: a sync tool's conflict copy, a temporary
/// file, an editor's backup, or something else someone put there. Folio never reads it as data
/// and never deletes it. See ``Store/strayFiles()``.
public struct StrayFile: Sendable, Hashable, CustomStringConvertible {
    /// What kind of file it looks like.
    public enum Kind: Sendable, Hashable {
        /// Two copies of a file were changed on two machines and the sync tool kept both
        /// (Syncthing's `name.sync-conflict-….json`, Dropbox's `name (… conflicted copy …).json`,
        /// Nextcloud's `name (conflicted copy …).json`, unison's `name (conflict_on_…).json`,
        /// iCloud's `name 2.json`). `original` is the data file it is a copy of. Someone must
        /// merge what they need into the original and delete the copy.
        case conflictCopy(original: String)
        /// A file being written by a copy tool (rsync's `.name.XXXXXX`) or another hidden file.
        case temporary
        /// An editor's backup or swap file (`name.json~`, `.name.json.swp`, `#name.json#`).
        case editorBackup
        /// Anything else that is not a data file name.
        case unrecognized
    }

    /// The path, relative to the store's folder.
    public let path: String
    /// What kind of file it looks like.
    public let kind: Kind

    /// The path and what the file looks like, in one line (as `folio verify` prints it).
    public var description: String {
        switch kind {
        case .conflictCopy(let original): return "\(path): conflict copy of \(original), not read as data"
        case .temporary: return "\(path): temporary file, not read as data"
        case .editorBackup: return "\(path): editor backup, not read as data"
        case .unrecognized: return "\(path): not a data file name, not read"
        }
    }

    /// Classifies a file found among the data files. `isData` says whether a path (relative to
    /// the store) is a valid data file name.
    /// - Returns: nil for a data file.
    static func classify(path: String, isData: (String) -> Bool) -> StrayFile? {
        let slash = path.lastIndex(of: "/")
        let folder = slash.map { String(path[..<$0]) + "/" } ?? ""
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        if isData(path) { return nil }
        if let original = conflictOriginal(name), isData(folder + original) {
            return StrayFile(path: path, kind: .conflictCopy(original: folder + original))
        }
        switch kind(ofName: name) {
        case .conflictCopy: return StrayFile(path: path, kind: .unrecognized)   // of no data file
        case let kind: return StrayFile(path: path, kind: kind)
        }
    }

    /// What a file name looks like, from the name alone (a conflict copy's `original` is the
    /// name it was copied from, in the same folder).
    static func kind(ofName name: String) -> Kind {
        if let original = conflictOriginal(name) { return .conflictCopy(original: original) }
        if name.hasSuffix("~") || name.hasSuffix(".swp") || name.hasSuffix(".swo") || name.hasSuffix(".swx")
            || (name.hasPrefix("#") && name.hasSuffix("#")) || name.hasSuffix(".bak") || name.hasSuffix(".orig")
        {
            return .editorBackup
        }
        if name.hasPrefix(".") || name.hasPrefix("~") || name.hasSuffix(".tmp") || name.hasSuffix(".partial") {
            return .temporary
        }
        return .unrecognized
    }

    /// The name a conflict copy was made from, if `name` has the form of one.
    static func conflictOriginal(_ name: String) -> String? {
        guard name.hasSuffix(".json") else { return nil }
        let stem = String(name.dropLast(5))
        // Syncthing: stem.sync-conflict-YYYYMMDD-HHMMSS-DEVICE
        if let range = stem.range(of: ".sync-conflict-") {
            return String(stem[..<range.lowerBound]) + ".json"
        }
        // Dropbox: stem (Someone's conflicted copy YYYY-MM-DD); Nextcloud and ownCloud:
        // stem (conflicted copy YYYY-MM-DD HHMMSS); unison's -copyonconflict: stem (conflict_on_YYYY-MM-DD)
        if let open = stem.range(of: " (", options: .backwards), stem.hasSuffix(")"),
            case let inside = stem[open.upperBound...],
            inside.contains("conflicted copy") || inside.hasPrefix("Case Conflict") || inside.hasPrefix("conflict_on_")
        {
            return String(stem[..<open.lowerBound]) + ".json"
        }
        // iCloud Drive, Finder: "stem 2", "stem 3"…
        if let space = stem.lastIndex(of: " "), case let digits = stem[stem.index(after: space)...],
            !digits.isEmpty, digits.count <= 3, digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber)
        {
            return String(stem[..<space]) + ".json"
        }
        return nil
    }
}

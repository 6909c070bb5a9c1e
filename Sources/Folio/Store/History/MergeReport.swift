/// A merge of a data file that the app may want to show a person (FORMAT.md, "Editing by hand"):
/// a file whose base Folio did not know (it deleted nothing, and kept the entities the file
/// lacks), or one whose entities were changed on both sides.
public struct MergeReport: Sendable, Equatable, CustomStringConvertible {
    /// What happened.
    public enum Kind: String, Sendable {
        /// The file named no revision Folio keeps: its entities were added and updated, none removed.
        case unknownBase
        /// Entities changed both in the file and by Folio since the file's base: merged field by
        /// field, the file's values first.
        case conflict
    }

    /// The data file, relative to the store's folder.
    public var path: String
    /// Whether the file's base was unknown or both sides changed entities.
    public var kind: Kind
    /// For ``Kind/unknownBase``: the entities the file lacked, which stay.
    public var kept: [String]
    /// The entities whose values the file changed (``Kind/unknownBase``) or both sides changed
    /// (``Kind/conflict``).
    public var changed: [String]

    /// The merge in one line, with the file and the number of entities concerned.
    public var description: String {
        switch kind {
        case .unknownBase:
            return "\(path): merged without a known base: kept \(kept.count) entities the file lacks, took its values of \(changed.count)"
        case .conflict:
            return "\(path): \(changed.count) entities changed on both sides, merged field by field with the file's values first"
        }
    }
}

/// The merge reports of one process, newest last, at most ``limit``. Guarded by the store's actor.
final class MergeReports {
    static let limit = 100
    private(set) var reports: [MergeReport] = []

    func note(_ report: MergeReport) {
        reports.append(report)
        if reports.count > Self.limit { reports.removeFirst(reports.count - Self.limit) }
    }
}

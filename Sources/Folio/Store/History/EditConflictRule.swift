/// Which side a merge of a data file keeps where a save (a person's, or a file from another copy
/// of the store) and Folio both changed one entity since the save's base (FORMAT.md, "Every save is
/// merged against the version it was made from"). Chosen per collection with
/// ``Store/Configuration/editConflictRules``; either way the entity is merged field by field, only
/// a field both sides changed follows the rule, and the entity is reported
/// (``Store/mergeReports()``, kind ``MergeReport/Kind/conflict``).
public enum EditConflictRule: Sendable, Equatable {
    /// The file's value wins (the default): what a person typed is what they see.
    case fileFirst
    /// Folio's value wins: for data the app derives or owns (stats, counters), where a stale
    /// buffer's value of a field is more likely out of date than meant.
    case storeFirst
}

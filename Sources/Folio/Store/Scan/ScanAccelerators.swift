internal import Foundation

/// Which of a predicate scan's accelerators run. All of them do; the benchmark turns some off
/// through the environment (`FOLIO_SCAN_WITHOUT=fields,index,rows`, in a process of its own) to
/// measure what each one adds on each shape of query. Answers never depend on it.
struct ScanAccelerators: OptionSet, Sendable {
    let rawValue: Int

    /// The predicate compiled to fields (``FieldFilter``): files are read field by field, and only
    /// the entities that match are decoded. Without it every entity is decoded and tested.
    static let fields = ScanAccelerators(rawValue: 1 << 0)
    /// The field index file (``FieldIndexFile``): a settled file's columns are read from the index
    /// instead of the file.
    static let index = ScanAccelerators(rawValue: 1 << 1)
    /// The rows a word rules out, found on a column's bytes (WordRows.swift).
    static let rows = ScanAccelerators(rawValue: 1 << 2)

    /// The accelerators of this process: all but those `FOLIO_SCAN_WITHOUT` names.
    static let enabled: ScanAccelerators = {
        let names = ProcessInfo.processInfo.environment["FOLIO_SCAN_WITHOUT"]?.split(separator: ",") ?? []
        let named: [String: ScanAccelerators] = ["fields": .fields, "index": .index, "rows": .rows]
        var enabled: ScanAccelerators = [.fields, .index, .rows]
        for name in names { enabled.remove(named[name.trimmingCharacters(in: .whitespaces)] ?? []) }
        return enabled
    }()
}

/// A contender of the scan matrix: Folio with some of its scan accelerators turned off, each in
/// child processes of its own (Folio reads `FOLIO_SCAN_WITHOUT` once per process), or SQLite
/// through GRDB.
enum ScanContender: String, CaseIterable, Sendable {
    /// Every accelerator: the predicate on fields, the field index, the rows ruled out on a
    /// column's bytes.
    case all
    /// `FOLIO_SCAN_WITHOUT=rows`: fields and the field index.
    case withoutRows
    /// `FOLIO_SCAN_WITHOUT=rows,index`: the predicate on fields, every file read.
    case fieldsOnly
    /// `FOLIO_SCAN_WITHOUT=fields,index,rows`: every entity decoded and tested.
    case plain
    case grdb

    static let folio: [ScanContender] = [.all, .withoutRows, .fieldsOnly, .plain]

    /// The child's `FOLIO_SCAN_WITHOUT` (nil: unset).
    var scanWithout: String? {
        switch self {
        case .all, .grdb: return nil
        case .withoutRows: return "rows"
        case .fieldsOnly: return "rows,index"
        case .plain: return "fields,index,rows"
        }
    }

    var title: String {
        switch self {
        case .grdb: return "GRDB"
        case .all: return "Folio, all accelerators"
        default: return "Folio, FOLIO_SCAN_WITHOUT=" + (scanWithout ?? "")
        }
    }

    /// The table's column heading.
    var heading: String {
        switch self {
        case .all: return "Folio all"
        case .withoutRows: return "Folio -rows"
        case .fieldsOnly: return "Folio fields only"
        case .plain: return "Folio plain decode"
        case .grdb: return "GRDB"
        }
    }
}

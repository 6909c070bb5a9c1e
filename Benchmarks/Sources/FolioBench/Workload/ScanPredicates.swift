import Foundation

/// The scan matrix's predicates: for each shape, one per share of the entities it selects, each
/// what an app asks (a search in titles, open todos of some priority, a range of estimates). The
/// same words and flags in both shapes: 0.1% and 50% are the same predicate on either.
enum ScanSelectivity: String, CaseIterable, Sendable {
    case tenth = "0.1%"
    case one = "1%"
    case ten = "10%"
    case half = "50%"
}

/// Which entity a matrix store holds.
enum ScanShape: String, CaseIterable, Sendable {
    case narrow, wide

    /// What the tables call it.
    var title: String {
        switch self {
        case .narrow: return "narrow todo (title, done, day)"
        case .wide: return "wide todo (12 fields: dates, null and missing optionals, an array, an object, numbers, strings)"
        }
    }

    /// The predicate of `selectivity` as the tables show it.
    func predicateText(_ selectivity: ScanSelectivity) -> String {
        switch (self, selectivity) {
        case (_, .tenth): return "title contains \"piano\""
        case (.narrow, .one): return "title contains \"dentist\" && !done"
        case (.narrow, .ten): return "title contains \"invoice\" && !done"
        case (.wide, .one): return "!done && priority > 3"
        case (.wide, .ten): return "estimate >= 10 && estimate < 14"
        case (_, .half): return "!done"
        }
    }
}

extension NarrowTodo {
    static func predicate(_ selectivity: ScanSelectivity) -> Predicate<NarrowTodo> {
        let (rare, some, many) = ("piano", "dentist", "invoice")
        switch selectivity {
        case .tenth: return #Predicate { $0.title.contains(rare) }
        case .one: return #Predicate { $0.title.contains(some) && !$0.done }
        case .ten: return #Predicate { $0.title.contains(many) && !$0.done }
        case .half: return #Predicate { !$0.done }
        }
    }
}

extension WideTodo {
    static func predicate(_ selectivity: ScanSelectivity) -> Predicate<WideTodo> {
        let rare = "piano", priority = 3, (low, high) = (10.0, 14.0)
        switch selectivity {
        case .tenth: return #Predicate { $0.title.contains(rare) }
        case .one: return #Predicate { !$0.done && $0.priority > priority }
        case .ten: return #Predicate { $0.estimate >= low && $0.estimate < high }
        case .half: return #Predicate { !$0.done }
        }
    }
}

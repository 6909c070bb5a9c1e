internal import Foundation

/// A query's predicate evaluated on the fields of an entity as they are in its partition file,
/// before (and mostly instead of) decoding the entity: a scan over years of files then decodes only
/// the entities that match (StoreEngine+Scan.swift).
///
/// Built from the `#Predicate`'s own expression tree, for the expressions listed below: each node
/// is evaluated by the same generic operation as Foundation's own `evaluate`, so the result is the
/// same, and only the key paths become field reads. Anything else (a computed property, an optional
/// field, a method the list does not have) makes ``compile(_:)`` return nil and the query
/// decodes every entity as before. An entity whose field is missing or of another JSON type than
/// the property is *undetermined* (``FieldUndetermined``): it is decoded and tested the usual way.
///
/// Supported: `&&`, `||`, `!`, `==`, `!=`, `<`, `<=`, `>`, `>=`, `contains` and `starts(with:)` on
/// a collection (a `String`), constants, and key paths of the entity to `String`, `Bool`, `Int`,
/// `Int64` and `Double` properties that are decoded straight from one top-level field
/// (``FieldProbe`` finds which).
///
/// Sendable by hand: `evaluate` is a pure function of its row built from the predicate's constants
/// (strings, booleans, numbers), so the scan's threads may call it at once.
struct FieldFilter: @unchecked Sendable {
    /// The key paths of the entity the filter reads, with their kinds, in the order of a
    /// ``FieldRow``'s values (what ``FieldProbe`` maps to fields).
    let keyPaths: [(keyPath: AnyKeyPath, kind: FieldKind)]
    /// The top-level field each of `keyPaths` is decoded from; empty until ``reading(_:)``.
    private(set) var keys: [String] = []
    let evaluate: (FieldRow) throws -> Bool
    /// What the predicate requires of some fields whatever the rest (`title.contains("milk") &&
    /// !done`): a row whose value in a column certainly fails one cannot match, which the column's
    /// bytes tell without reading a value of each row (Scan/WordRows.swift).
    let requirements: [FieldRequirement]

    /// The filter for `predicate`, or nil when some part of it cannot be evaluated on fields.
    /// Its key paths are named fields by ``reading(_:)`` before it is used.
    static func compile<E>(_ predicate: Predicate<E>) -> FieldFilter? {
        guard let compilable = predicate.expression as? any FieldCompilable else { return nil }
        let compiler = FieldCompiler(variable: predicate.variable.key)
        guard let evaluate = compilable.compiledPredicate(compiler) else { return nil }
        let requirements = !ScanAccelerators.enabled.contains(.rows) ? [] : (compilable as? any FieldRequiring)?.requirements(compiler) ?? []
        return FieldFilter(
            keyPaths: compiler.keyPaths, evaluate: evaluate, requirements: requirements,
            agreement: agreement(compiler.keyPaths, of: E.self))
    }

    /// Whether an entity's properties are exactly the values of a row as this filter read them
    /// (strings byte for byte, numbers as parsed): then the filter's answer on the row is the
    /// predicate's on the entity. A `(E, FieldRow) -> Bool` for the predicate's entity type,
    /// made when the filter is compiled, so no property is boxed to be compared.
    private let agreement: Any

    /// ``agreement`` for entities of type `E`; nil for another type than the predicate's.
    func agreement<E>(_ type: E.Type) -> ((E, FieldRow) -> Bool)? {
        agreement as? (E, FieldRow) -> Bool
    }

    private init(
        keyPaths: [(keyPath: AnyKeyPath, kind: FieldKind)], evaluate: @escaping (FieldRow) throws -> Bool,
        requirements: [FieldRequirement], agreement: Any
    ) {
        (self.keyPaths, self.evaluate, self.requirements, self.agreement) = (keyPaths, evaluate, requirements, agreement)
    }

    /// ``agreement`` for the key paths of `E`'s properties: for each slot, a comparison of the
    /// property with the value the filter read.
    private static func agreement<E>(_ keyPaths: [(keyPath: AnyKeyPath, kind: FieldKind)], of type: E.Type) -> (E, FieldRow) -> Bool {
        func same<T>(_ keyPath: AnyKeyPath, _ value: @escaping (FieldValue) -> T?) -> (E, FieldValue?) -> Bool where T: Equatable {
            guard let keyPath = keyPath as? KeyPath<E, T> else { return { _, _ in false } }
            return { entity, field in field.flatMap(value) == entity[keyPath: keyPath] }
        }
        let comparisons: [(E, FieldValue?) -> Bool] = keyPaths.map { keyPath, kind in
            switch kind {
            case .string:
                guard let keyPath = keyPath as? KeyPath<E, String> else { return { _, _ in false } }
                return { entity, field in
                    guard case .string(let text)? = field else { return false }
                    return entity[keyPath: keyPath].utf8.elementsEqual(text.utf8)
                }
            case .bool:
                return same(keyPath) { if case .bool(let flag) = $0 { flag } else { nil } }
            case .int:
                return same(keyPath) { if case .number(let text) = $0 { Int(text) } else { nil } }
            case .int64:
                return same(keyPath) { if case .number(let text) = $0 { Int64(text) } else { nil } }
            case .double:
                return same(keyPath) { if case .number(let text) = $0 { Double(text) } else { nil } }
            }
        }
        return { entity, row in
            guard row.values.count == comparisons.count else { return false }
            for slot in comparisons.indices where !comparisons[slot](entity, row.values[slot]) { return false }
            return true
        }
    }

    /// This filter reading each key path from its field; nil when one of them has none.
    func reading(_ fields: [AnyKeyPath: String]) -> FieldFilter? {
        var named = self
        named.keys = []
        for (keyPath, _) in keyPaths {
            guard let key = fields[keyPath] else { return nil }
            named.keys.append(key)
        }
        return named
    }
}

/// What a value of a row must be for the predicate to hold, whatever the row's other values.
enum FieldRequirement: Sendable, Equatable {
    /// The string in `slot` contains the word: its UTF-8 bytes, plain text
    /// (``TextSearch/plainBytes(_:)``).
    case word(slot: Int, SearchWord)
}

/// An expression that holds only where some fields meet some requirements: the root of a
/// predicate, and the sides of an `&&` below it (never below `||` or `!`).
protocol FieldRequiring {
    func requirements(_ compiler: FieldCompiler) -> [FieldRequirement]
}

extension PredicateExpressions.Conjunction: FieldRequiring where LHS: FieldCompilable, RHS: FieldCompilable {
    func requirements(_ compiler: FieldCompiler) -> [FieldRequirement] {
        ((lhs as? any FieldRequiring)?.requirements(compiler) ?? []) + ((rhs as? any FieldRequiring)?.requirements(compiler) ?? [])
    }
}

extension PredicateExpressions.CollectionContainsCollection: FieldRequiring where Base: FieldCompilable, Other: FieldCompilable {
    func requirements(_ compiler: FieldCompiler) -> [FieldRequirement] {
        guard let slot = (base as? any FieldPropertyPath)?.slot(compiler, String.self),
            let word = (other as? PredicateExpressions.Value<String>)?.value, TextSearch.plainBytes(word),
            let bytes = SearchWord(Array(word.utf8))
        else { return [] }
        return [.word(slot: slot, bytes)]
    }
}

/// A key path of the predicate's entity to one of its properties.
private protocol FieldPropertyPath {
    /// The slot the compiled filter reads the property from, when it is a `T` read from its
    /// field; nil otherwise, or when it was not compiled.
    func slot<T>(_ compiler: FieldCompiler, _ type: T.Type) -> Int?
}

extension PredicateExpressions.KeyPath: FieldPropertyPath {
    fileprivate func slot<T>(_ compiler: FieldCompiler, _ type: T.Type) -> Int? {
        guard Output.self == T.self, (root as? any PredicateVariable)?.variableID == compiler.variable else { return nil }
        switch type {
        case is String.Type: return compiler.existingSlot(keyPath as AnyKeyPath, .string)
        case is Bool.Type: return compiler.existingSlot(keyPath as AnyKeyPath, .bool)
        default: return nil
        }
    }
}

/// The Swift type of a property a filter reads.
enum FieldKind: Sendable, Equatable {
    case string, bool, int, int64, double
}

/// A scalar top-level field of an entity as its file holds it.
enum FieldValue: Sendable, Equatable {
    case string(String)
    case bool(Bool)
    /// The number's JSON text.
    case number(String)
    /// `null`, an object or an array.
    case other
}

/// The fields a filter reads, for one entity: `values[i]` is the field `keys[i]`, nil when absent.
struct FieldRow {
    var values: [FieldValue?]
}

/// Thrown while evaluating a filter on an entity whose field is missing or does not hold what the
/// property's type decodes: the entity is decoded and the predicate evaluated as usual.
struct FieldUndetermined: Error {}

/// Collects the key paths a filter reads while it is compiled.
final class FieldCompiler {
    let variable: PredicateExpressions.VariableID
    private(set) var keyPaths: [(keyPath: AnyKeyPath, kind: FieldKind)] = []

    init(variable: PredicateExpressions.VariableID) {
        self.variable = variable
    }

    /// The position in a ``FieldRow`` of the value the key path reads.
    func slot(_ keyPath: AnyKeyPath, _ kind: FieldKind) -> Int {
        if let index = keyPaths.firstIndex(where: { $0.keyPath == keyPath }) { return index }
        keyPaths.append((keyPath, kind))
        return keyPaths.count - 1
    }

    /// The slot of a key path already compiled as `kind`.
    func existingSlot(_ keyPath: AnyKeyPath, _ kind: FieldKind) -> Int? {
        keyPaths.firstIndex { $0.keyPath == keyPath && $0.kind == kind }
    }
}

/// An expression that can be evaluated on a ``FieldRow``.
protocol FieldCompilable: PredicateExpression {
    /// The expression as a function of the row, or nil when it cannot be one.
    func compiled(_ compiler: FieldCompiler) -> ((FieldRow) throws -> Output)?
}

extension FieldCompilable {
    /// ``compiled(_:)`` for an expression known at run time only, when it gives a `Bool`.
    func compiledPredicate(_ compiler: FieldCompiler) -> ((FieldRow) throws -> Bool)? {
        compiled(compiler) as? (FieldRow) throws -> Bool
    }
}

/// The predicate's own variable (the entity), as the root of a key path.
private protocol PredicateVariable {
    var variableID: PredicateExpressions.VariableID { get }
}

extension PredicateExpressions.Variable: PredicateVariable {
    fileprivate var variableID: PredicateExpressions.VariableID { key }
}

extension PredicateExpressions.KeyPath: FieldCompilable {
    func compiled(_ compiler: FieldCompiler) -> ((FieldRow) throws -> Output)? {
        guard (root as? any PredicateVariable)?.variableID == compiler.variable else { return nil }
        // The closure reads its slot as `T`, which is `Output`: its type is cast once, here, so no
        // value is boxed and cast at each row.
        func reading<T>(_ kind: FieldKind, _ read: @escaping (FieldValue?) throws -> T) -> ((FieldRow) throws -> Output)? {
            let slot = compiler.slot(keyPath as AnyKeyPath, kind)
            let typed: (FieldRow) throws -> T = { row in try read(row.values[slot]) }
            return typed as? (FieldRow) throws -> Output
        }
        // Only plain integer text: anything else ("1.0", "1e2") is left to the decoder.
        func integerText(_ value: FieldValue?) throws -> String {
            guard case .number(let text)? = value, text.utf8.allSatisfy({ $0 == UInt8(ascii: "-") || ($0 >= 0x30 && $0 <= 0x39) })
            else { throw FieldUndetermined() }
            return text
        }
        switch Output.self {
        case is String.Type:
            return reading(.string) { value in
                guard case .string(let text)? = value else { throw FieldUndetermined() }
                return text
            }
        case is Bool.Type:
            return reading(.bool) { value in
                guard case .bool(let flag)? = value else { throw FieldUndetermined() }
                return flag
            }
        case is Int.Type:
            return reading(.int) { value in
                guard let number = Int(try integerText(value)) else { throw FieldUndetermined() }
                return number
            }
        case is Int64.Type:
            return reading(.int64) { value in
                guard let number = Int64(try integerText(value)) else { throw FieldUndetermined() }
                return number
            }
        case is Double.Type:
            return reading(.double) { value in
                guard case .number(let text)? = value, let number = Double(text), number.isFinite else { throw FieldUndetermined() }
                return number
            }
        default:
            return nil
        }
    }
}

extension PredicateExpressions.Value: FieldCompilable {
    func compiled(_ compiler: FieldCompiler) -> ((FieldRow) throws -> Output)? {
        // Only the value types a filter compares fields with, all of them Sendable values.
        guard value is String || value is Bool || value is Int || value is Int64 || value is Double else { return nil }
        let constant = value
        return { _ in constant }
    }
}

extension PredicateExpressions.Conjunction: FieldCompilable where LHS: FieldCompilable, RHS: FieldCompilable {
    func compiled(_ compiler: FieldCompiler) -> ((FieldRow) throws -> Bool)? {
        guard let left = lhs.compiled(compiler), let right = rhs.compiled(compiler) else { return nil }
        return { row in try left(row) && right(row) }
    }
}

extension PredicateExpressions.Disjunction: FieldCompilable where LHS: FieldCompilable, RHS: FieldCompilable {
    func compiled(_ compiler: FieldCompiler) -> ((FieldRow) throws -> Bool)? {
        guard let left = lhs.compiled(compiler), let right = rhs.compiled(compiler) else { return nil }
        return { row in try left(row) || right(row) }
    }
}

extension PredicateExpressions.Negation: FieldCompilable where Wrapped: FieldCompilable {
    func compiled(_ compiler: FieldCompiler) -> ((FieldRow) throws -> Bool)? {
        guard let inner = wrapped.compiled(compiler) else { return nil }
        return { row in try !inner(row) }
    }
}

extension PredicateExpressions.Equal: FieldCompilable where LHS: FieldCompilable, RHS: FieldCompilable {
    func compiled(_ compiler: FieldCompiler) -> ((FieldRow) throws -> Bool)? {
        guard let left = lhs.compiled(compiler), let right = rhs.compiled(compiler) else { return nil }
        return { row in try left(row) == right(row) }
    }
}

extension PredicateExpressions.NotEqual: FieldCompilable where LHS: FieldCompilable, RHS: FieldCompilable {
    func compiled(_ compiler: FieldCompiler) -> ((FieldRow) throws -> Bool)? {
        guard let left = lhs.compiled(compiler), let right = rhs.compiled(compiler) else { return nil }
        return { row in try left(row) != right(row) }
    }
}

extension PredicateExpressions.Comparison: FieldCompilable where LHS: FieldCompilable, RHS: FieldCompilable {
    func compiled(_ compiler: FieldCompiler) -> ((FieldRow) throws -> Bool)? {
        guard let left = lhs.compiled(compiler), let right = rhs.compiled(compiler) else { return nil }
        let op = self.op
        return { row in
            let a = try left(row), b = try right(row)
            switch op {
            case .lessThan: return a < b
            case .lessThanOrEqual: return a <= b
            case .greaterThan: return a > b
            case .greaterThanOrEqual: return a >= b
            }
        }
    }
}

extension PredicateExpressions.CollectionContainsCollection: FieldCompilable where Base: FieldCompilable, Other: FieldCompilable {
    func compiled(_ compiler: FieldCompiler) -> ((FieldRow) throws -> Bool)? {
        guard let whole = base.compiled(compiler), let part = other.compiled(compiler) else { return nil }
        if let whole = whole as? (FieldRow) throws -> String, let part = part as? (FieldRow) throws -> String {
            // A constant word (the usual search) is looked at once, not at every row.
            if let constant = other as? PredicateExpressions.Value<String> {
                let word = constant.value, needle = TextSearch.plainBytes(word) ? SearchWord(Array(word.utf8)) : nil
                return { row in
                    let text = try whole(row)
                    if let needle, TextSearch.plainBytes(text) { return TextSearch.contains(text, needle) }
                    return TextSearch.characters(text, contain: word)
                }
            }
            return { row in
                let text = try whole(row), word = try part(row)
                return TextSearch.plainBytes(text, word) ? TextSearch.contains(text, word) : TextSearch.characters(text, contain: word)
            }
        }
        return { row in try whole(row).contains(try part(row)) }
    }
}

extension PredicateExpressions.SequenceStartsWith: FieldCompilable where Base: FieldCompilable, Prefix: FieldCompilable {
    func compiled(_ compiler: FieldCompiler) -> ((FieldRow) throws -> Bool)? {
        guard let whole = base.compiled(compiler), let start = prefix.compiled(compiler) else { return nil }
        if let whole = whole as? (FieldRow) throws -> String, let start = start as? (FieldRow) throws -> String {
            return { row in
                let text = try whole(row), head = try start(row)
                return TextSearch.plainBytes(text, head) ? text.utf8.starts(with: head.utf8) : TextSearch.characters(text, startWith: head)
            }
        }
        return { row in try whole(row).starts(with: try start(row)) }
    }
}

/// Searching text where a `Character` is one byte: ASCII without a carriage return (`"\r\n"` is
/// one `Character`, so `"a\r\nb"` does not contain `"\r"`). There, searching the bytes gives
/// exactly what the `Character` search of `Collection.contains` gives, many times faster.
enum TextSearch {
    /// Whether both strings are such text.
    static func plainBytes(_ first: String, _ second: String) -> Bool {
        plainBytes(first) && plainBytes(second)
    }

    /// Whether the string is such text.
    static func plainBytes(_ text: String) -> Bool {
        text.utf8.withContiguousStorageIfAvailable(plainBytes) ?? text.utf8.allSatisfy { $0 < 0x80 && $0 != 0x0D }
    }

    /// Whether the UTF-8 bytes are such text.
    static func plainBytes(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        bytes.allSatisfy { $0 < 0x80 && $0 != 0x0D }
    }

    /// `Collection.contains` as Foundation's `CollectionContainsCollection` calls it: generic, so
    /// not `StringProtocol.contains`, which differs (an empty word, canonical equivalence).
    static func characters<C: Collection>(_ text: C, contain word: C) -> Bool where C.Element: Equatable {
        text.contains(word)
    }

    /// `Sequence.starts(with:)` as Foundation's `SequenceStartsWith` calls it.
    static func characters<C: Collection>(_ text: C, startWith head: C) -> Bool where C.Element: Equatable {
        text.starts(with: head)
    }

    /// Whether `word`'s bytes occur in `text`'s.
    static func contains(_ text: String, _ word: String) -> Bool {
        guard let word = SearchWord(Array(word.utf8)) else { return true }
        return contains(text, word)
    }

    /// Whether `word`'s bytes occur in `text`'s.
    static func contains(_ text: String, _ word: SearchWord) -> Bool {
        var text = text
        return text.withUTF8 { contains($0, word) }
    }
}

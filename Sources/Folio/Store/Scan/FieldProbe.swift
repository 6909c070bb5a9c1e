internal import Foundation

/// Which top-level JSON field each property a predicate reads is decoded from, learnt from the
/// entity's own `Decodable` conformance: a sample entity of the store is decoded several times
/// with every `String`, `Bool`, `Int`, `Int64` and `Double` field replaced by a marked value, and
/// a property is mapped to a field only when it holds exactly that field's mark in every pass.
///
/// So a `CodingKeys` rename is followed (`title` read from `"name"`), and a property that is
/// computed, transformed or chosen between several fields (`done = !open`, `title = a ?? b`) is not
/// mapped: the filter is then not compiled and the query decodes every entity, as before.
enum FieldProbe {
    /// The JSON field of each key path, or nil when one of them cannot be mapped or the sample
    /// does not decode.
    static func keys<E: Entity>(_ type: E.Type, keyPaths: [(AnyKeyPath, FieldKind)], sample: [String: JSONValue],
                                coder: EntityCoder) -> [AnyKeyPath: String]? {
        let registry = ProbeRegistry()
        var passes: [ProbePass] = [.allFalse, .allTrue]
        var decoded: [E] = []
        do {
            for pass in passes { decoded.append(try E(from: ProbeDecoder(sample: sample, pass: pass, registry: registry, coder: coder))) }
            for key in registry.boolKeys {
                for pass in [ProbePass.only(key, true), .only(key, false)] {
                    passes.append(pass)
                    decoded.append(try E(from: ProbeDecoder(sample: sample, pass: pass, registry: registry, coder: coder)))
                }
            }
        } catch {
            return nil
        }
        var result: [AnyKeyPath: String] = [:]
        for (keyPath, kind) in keyPaths {
            guard let path = keyPath as? PartialKeyPath<E> else { return nil }
            let values = decoded.map { $0[keyPath: path] }
            let candidates = registry.keys.filter { key in
                zip(passes, values).allSatisfy { pass, value in registry.holds(value, mark: key, kind: kind, pass: pass) }
            }
            guard candidates.count == 1 else { return nil }
            result[keyPath] = candidates[0]
        }
        return result
    }
}

/// One decoding of the sample: how `Bool` fields are set (the other kinds take a mark that names
/// the pass and the field).
enum ProbePass: Equatable {
    case allFalse, allTrue
    /// `key` is `value`, every other `Bool` field the opposite.
    case only(String, Bool)

    var index: Int {
        switch self {
        case .allFalse: return 0
        case .allTrue: return 1
        case .only(_, let value): return value ? 2 : 3
        }
    }

    func bool(_ key: String) -> Bool {
        switch self {
        case .allFalse: return false
        case .allTrue: return true
        case .only(let only, let value): return key == only ? value : !value
        }
    }
}

/// The fields the sample's decoding asked for, each with a number for its marks.
final class ProbeRegistry {
    private(set) var keys: [String] = []
    private(set) var boolKeys: [String] = []
    private var numbers: [String: Int] = [:]

    func number(_ key: String, bool: Bool = false) -> Int {
        if let number = numbers[key] { return number }
        numbers[key] = keys.count
        keys.append(key)
        if bool { boolKeys.append(key) }
        return keys.count - 1
    }

    func string(_ key: String, _ pass: ProbePass) -> String {
        "\u{1}folio-probe \(pass.index) \(number(key)) \(key)"
    }

    func integer(_ key: String, _ pass: ProbePass) -> Int {
        1_000_000_000 + pass.index * 100_000 + number(key)
    }

    /// Whether `value` is the mark of `key` for this kind in this pass.
    func holds(_ value: Any, mark key: String, kind: FieldKind, pass: ProbePass) -> Bool {
        switch kind {
        case .string: return value as? String == string(key, pass)
        case .bool: return boolKeys.contains(key) && value as? Bool == pass.bool(key)
        case .int: return value as? Int == integer(key, pass)
        case .int64: return value as? Int64 == Int64(integer(key, pass))
        case .double: return value as? Double == Double(integer(key, pass)) + 0.5
        }
    }
}

/// Decodes the sample with marked scalar fields; every other field decodes from the sample's
/// own JSON, so dates, enums and nested types decode as they do from the file.
private struct ProbeDecoder: Decoder {
    let sample: [String: JSONValue]
    let pass: ProbePass
    let registry: ProbeRegistry
    let coder: EntityCoder
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(ProbeContainer<Key>(decoder: self))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer { throw ProbeDecoder.unsupported }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { throw ProbeDecoder.unsupported }

    static let unsupported = DecodingError.dataCorrupted(DecodingError.Context(codingPath: [], debugDescription: "not probed"))
}

private struct ProbeContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: ProbeDecoder
    var codingPath: [any CodingKey] { [] }
    var allKeys: [Key] { decoder.sample.keys.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { decoder.sample[key.stringValue] != nil }

    private func present(_ key: Key) throws -> JSONValue {
        guard let value = decoder.sample[key.stringValue] else {
            throw DecodingError.keyNotFound(key, DecodingError.Context(codingPath: [], debugDescription: "absent from the sample"))
        }
        return value
    }

    func decodeNil(forKey key: Key) throws -> Bool { try present(key) == .null }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
        _ = try present(key)
        _ = decoder.registry.number(key.stringValue, bool: true)
        return decoder.pass.bool(key.stringValue)
    }

    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        _ = try present(key)
        return decoder.registry.string(key.stringValue, decoder.pass)
    }

    func decode(_ type: Int.Type, forKey key: Key) throws -> Int {
        _ = try present(key)
        return decoder.registry.integer(key.stringValue, decoder.pass)
    }

    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 {
        _ = try present(key)
        return Int64(decoder.registry.integer(key.stringValue, decoder.pass))
    }

    func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
        _ = try present(key)
        return Double(decoder.registry.integer(key.stringValue, decoder.pass)) + 0.5
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        switch type {
        case is Bool.Type: if let value = try decode(Bool.self, forKey: key) as? T { return value }
        case is String.Type: if let value = try decode(String.self, forKey: key) as? T { return value }
        case is Int.Type: if let value = try decode(Int.self, forKey: key) as? T { return value }
        case is Int64.Type: if let value = try decode(Int64.self, forKey: key) as? T { return value }
        case is Double.Type: if let value = try decode(Double.self, forKey: key) as? T { return value }
        default: break
        }
        // Not marked: decoded from the sample's own value, as from the file.
        _ = decoder.registry.number(key.stringValue)
        return try decoder.coder.decoder.decode(T.self, from: Data(JSONWriter.compact(try present(key))))
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        throw ProbeDecoder.unsupported
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer { throw ProbeDecoder.unsupported }

    func superDecoder() throws -> any Decoder { throw ProbeDecoder.unsupported }

    func superDecoder(forKey key: Key) throws -> any Decoder { throw ProbeDecoder.unsupported }
}

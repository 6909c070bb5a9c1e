internal import Foundation

/// Which top-level JSON field each property a predicate reads is decoded from, learnt from the
/// entity's own `Decodable` conformance: a sample entity of the store is decoded several times
/// with its `String`, `Bool`, `Int`, `Int64` and `Double` fields replaced, and a property is mapped
/// to a field only when it holds exactly that field's value in every pass.
///
/// The passes: every field marked with a value that names the pass and the field; every `Bool`
/// false, then true; each `Bool` alone true and alone false; each other field alone at an edge
/// (`""` or `0`, then `" "` or `-1`) with the rest marked. So a `CodingKeys` rename is followed
/// (`label` read from `"name"`), and a property that is computed, transformed or chosen between
/// fields (`open = !done`, `heading = title.isEmpty ? name : title`) is not mapped: the filter is
/// then not used and the query decodes every entity, as before.
enum FieldProbe {
    /// The JSON field of each key path, or nil when one of them cannot be mapped or the sample
    /// does not decode.
    static func keys<E: Entity>(
        _ type: E.Type, keyPaths: [(keyPath: AnyKeyPath, kind: FieldKind)], sample: [String: JSONValue],
        coder: EntityCoder
    ) -> [AnyKeyPath: String]? {
        var passes: [ProbePass] = [ProbePass(number: 0, bools: false), ProbePass(number: 1, bools: true)]
        var decoded: [E] = []
        func decode(_ pass: ProbePass) throws {
            decoded.append(try E(from: ProbeDecoder(sample: sample, pass: pass, coder: coder)))
        }
        do {
            for pass in passes { try decode(pass) }
            // The fields the first pass asked for, in the order it asked.
            let asked = passes[0].handedOut
            for (key, value) in asked {
                let variants: [ProbePass.Edge] = value is Bool ? [.alone(true), .alone(false)] : [.empty, .other]
                for variant in variants {
                    let pass = ProbePass(number: passes.count, bools: false, edge: (key, variant))
                    passes.append(pass)
                    try decode(pass)
                }
            }
        } catch {
            return nil
        }
        var result: [AnyKeyPath: String] = [:]
        for (keyPath, _) in keyPaths {
            guard let path = keyPath as? PartialKeyPath<E> else { return nil }
            let values = decoded.map { $0[keyPath: path] }
            let candidates = passes[0].handedOut.map(\.key).filter { key in
                zip(passes, values).allSatisfy { pass, value in pass.handedOut(key).map { ProbePass.same($0, value) } ?? false }
            }
            guard candidates.count == 1 else { return nil }
            result[keyPath] = candidates[0]
        }
        return result
    }
}

/// One decoding of the sample: the value each probed field gets, and a record of what it got.
final class ProbePass {
    enum Edge {
        /// A `Bool` field alone with this value, every other one the opposite.
        case alone(Bool)
        /// `""`, `0` or `0.0`.
        case empty
        /// `" "`, `-1` or `-1.5`.
        case other
    }

    let number: Int
    let bools: Bool
    let edge: (key: String, variant: Edge)?
    /// What each field was given, in the order they were asked for.
    private(set) var handedOut: [(key: String, value: Any)] = []

    init(number: Int, bools: Bool, edge: (key: String, variant: Edge)? = nil) {
        (self.number, self.bools, self.edge) = (number, bools, edge)
    }

    func handedOut(_ key: String) -> Any? { handedOut.first { $0.key == key }?.value }

    private func record<T>(_ key: String, _ value: T) -> T {
        if handedOut(key) == nil { handedOut.append((key, value)) }
        return value
    }

    /// A number no real field is likely to hold, unique to the pass and the field.
    private func mark(_ key: String) -> Int {
        let index = handedOut.firstIndex { $0.key == key } ?? handedOut.count
        return 1_000_000_000 + number * 100_000 + index
    }

    func bool(_ key: String) -> Bool {
        guard let edge, case .alone(let value) = edge.variant else { return record(key, bools) }
        return record(key, key == edge.key ? value : !value)
    }

    func string(_ key: String) -> String {
        if let edge, edge.key == key { return record(key, edge.variant.isEmpty ? "" : " ") }
        return record(key, "\u{1}Folio-Probe \(mark(key)) \(key)")   // both cases: a decoder that changes case is seen
    }

    func integer(_ key: String) -> Int {
        if let edge, edge.key == key { return record(key, edge.variant.isEmpty ? 0 : -1) }
        return record(key, mark(key))
    }

    func double(_ key: String) -> Double {
        if let edge, edge.key == key { return record(key, edge.variant.isEmpty ? 0.0 : -1.5) }
        return record(key, Double(mark(key)) + 0.5)
    }

    /// Whether a property's value is the value handed out (compared as the same type).
    static func same(_ handed: Any, _ value: Any) -> Bool {
        switch handed {
        case let text as String: return value as? String == text
        case let flag as Bool: return value as? Bool == flag
        case let number as Int: return value as? Int == number || value as? Int64 == Int64(number)
        case let number as Double: return value as? Double == number
        default: return false
        }
    }
}

extension ProbePass.Edge {
    var isEmpty: Bool {
        if case .empty = self { return true }
        return false
    }
}

/// Decodes the sample with marked scalar fields; every other field decodes from the sample's
/// own JSON, so dates, enums and nested types decode as they do from the file.
private struct ProbeDecoder: Decoder {
    let sample: [String: JSONValue]
    let pass: ProbePass
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

    /// The key's name, once the sample is known to hold it: what the pass marks.
    private func name(_ key: Key) throws -> String {
        _ = try present(key)
        return key.stringValue
    }

    func decodeNil(forKey key: Key) throws -> Bool { try present(key) == .null }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try decoder.pass.bool(name(key)) }

    func decode(_ type: String.Type, forKey key: Key) throws -> String { try decoder.pass.string(name(key)) }

    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try decoder.pass.integer(name(key)) }

    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try Int64(decoder.pass.integer(name(key))) }

    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try decoder.pass.double(name(key)) }

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
        return try decoder.coder.decoder.decode(T.self, from: Data(JSONWriter.compact(try present(key))))
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        throw ProbeDecoder.unsupported
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer { throw ProbeDecoder.unsupported }

    func superDecoder() throws -> any Decoder { throw ProbeDecoder.unsupported }

    func superDecoder(forKey key: Key) throws -> any Decoder { throw ProbeDecoder.unsupported }
}

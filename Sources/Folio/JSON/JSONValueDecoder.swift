internal import Foundation

/// Decodes a `Decodable` straight from a parsed ``JSONValue``, without writing the JSON out and
/// parsing it again as `JSONDecoder` needs: the common reads of a store decode every entity of the
/// partitions they touch, and that round trip was most of their cost.
///
/// It answers only when it is sure to give what ``EntityCoder``'s `JSONDecoder` gives: strings,
/// booleans, integers written as plain digits, `Double`s, arrays, objects, `nil`, and `Date`s in
/// the forms Folio reads. For anything else (a number such as `1.0` for an `Int`, a `Float`, a
/// `Decimal`, `Data`, a `URL`, `superDecoder`, a value of the wrong type) it throws, and the caller
/// decodes through `JSONDecoder` instead, which then also gives the usual error.
struct JSONValueDecoder {
    /// Thrown when the decoder cannot vouch for the result; never shown to users.
    struct Unsure: Error {}

    static func decode<T: Decodable>(_ type: T.Type, from value: JSONValue) throws -> T {
        try ValueDecoder(value: value, parentPath: [], key: nil).decodeValue(T.self)
    }
}

private struct ValueDecoder: Decoder {
    let value: JSONValue
    /// The path to the object holding this value, and this value's key in it (nil at the top):
    /// the whole path is built only when a type asks for it, not for every field decoded.
    let parentPath: [any CodingKey]
    let key: (any CodingKey)?
    var codingPath: [any CodingKey] { key.map { parentPath + [$0] } ?? parentPath }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let members) = value else { throw JSONValueDecoder.Unsure() }
        return KeyedDecodingContainer(ObjectContainer<Key>(members: members, decoder: self))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let elements) = value else { throw JSONValueDecoder.Unsure() }
        return ArrayContainer(elements: elements, codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { SingleContainer(decoder: self) }

    /// The value as `T`: the scalar types directly, `Date` as Folio reads dates, anything else
    /// through its own `init(from:)` (except the types `JSONDecoder` treats specially).
    ///
    /// The type is compared by identity (a pointer comparison) rather than with `is`, and the
    /// scalar is handed back with `unsafeBitCast` once `T` is known to be its type: this runs for
    /// every field of every entity read.
    func decodeValue<T: Decodable>(_ type: T.Type) throws -> T {
        if T.self == String.self { return unsafeBitCast(try Scalars.string(value), to: T.self) }
        if T.self == Date.self { return unsafeBitCast(try Scalars.date(value), to: T.self) }
        if T.self == Bool.self { return unsafeBitCast(try Scalars.bool(value), to: T.self) }
        if T.self == Int.self { return unsafeBitCast(try Scalars.integer(value, as: Int.self), to: T.self) }
        if T.self == Double.self { return unsafeBitCast(try Scalars.double(value), to: T.self) }
        if T.self == Int64.self { return unsafeBitCast(try Scalars.integer(value, as: Int64.self), to: T.self) }
        if T.self == Int32.self { return unsafeBitCast(try Scalars.integer(value, as: Int32.self), to: T.self) }
        if T.self == Int16.self { return unsafeBitCast(try Scalars.integer(value, as: Int16.self), to: T.self) }
        if T.self == Int8.self { return unsafeBitCast(try Scalars.integer(value, as: Int8.self), to: T.self) }
        if T.self == UInt.self { return unsafeBitCast(try Scalars.integer(value, as: UInt.self), to: T.self) }
        if T.self == UInt64.self { return unsafeBitCast(try Scalars.integer(value, as: UInt64.self), to: T.self) }
        if T.self == UInt32.self { return unsafeBitCast(try Scalars.integer(value, as: UInt32.self), to: T.self) }
        if T.self == UInt16.self { return unsafeBitCast(try Scalars.integer(value, as: UInt16.self), to: T.self) }
        if T.self == UInt8.self { return unsafeBitCast(try Scalars.integer(value, as: UInt8.self), to: T.self) }
        if T.self == Float.self || T.self == Decimal.self || T.self == Data.self || T.self == URL.self {
            throw JSONValueDecoder.Unsure()
        }
        return try T(from: self)
    }
}

/// The scalar conversions, each exactly `JSONDecoder`'s where it answers.
private enum Scalars {
    static func string(_ value: JSONValue) throws -> String {
        guard case .string(let text) = value else { throw JSONValueDecoder.Unsure() }
        return text
    }

    static func bool(_ value: JSONValue) throws -> Bool {
        guard case .bool(let flag) = value else { throw JSONValueDecoder.Unsure() }
        return flag
    }

    /// Plain decimals only: an exponent is left to `JSONDecoder`, and so is a number that does
    /// not fit (it refuses `1e400` and `1e-400` where `Double(_:)` gives infinity and zero).
    static func double(_ value: JSONValue) throws -> Double {
        guard case .number(let text) = value, !text.utf8.contains(where: { $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }),
            let number = Double(text), number.isFinite,
            number != 0 || !text.utf8.contains(where: { $0 >= UInt8(ascii: "1") && $0 <= UInt8(ascii: "9") })
        else { throw JSONValueDecoder.Unsure() }
        return number
    }

    /// Plain digits only (with a leading minus): `1.0` or `1e2` are left to `JSONDecoder`.
    static func integer<I: FixedWidthInteger>(_ value: JSONValue, as type: I.Type) throws -> I {
        guard case .number(let text) = value,
            text.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || $0 == UInt8(ascii: "-") }), let number = I(text)
        else { throw JSONValueDecoder.Unsure() }
        return number
    }

    /// What ``EntityCoder``'s date strategy reads: Folio's own form, or ISO 8601 with or without
    /// fractional seconds; the last two are left to `JSONDecoder` (they are rare and slow anyway).
    static func date(_ value: JSONValue) throws -> Date {
        guard case .string(let text) = value, let date = ISO8601Date.parse(text) else { throw JSONValueDecoder.Unsure() }
        return date
    }
}

private struct ObjectContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let members: [String: JSONValue]
    /// The decoder of the object itself, whose path its members extend.
    let decoder: ValueDecoder

    var codingPath: [any CodingKey] { decoder.codingPath }

    var allKeys: [Key] { members.keys.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { members[key.stringValue] != nil }

    private func member(_ key: Key) throws -> JSONValue {
        guard let value = members[key.stringValue] else { throw JSONValueDecoder.Unsure() }
        return value
    }

    /// The member, or nil when it is missing or `null` (what `decodeIfPresent` answers nil for).
    private func presentMember(_ key: Key) -> JSONValue? {
        guard let value = members[key.stringValue], value != .null else { return nil }
        return value
    }

    private func decoder(_ key: Key, _ value: JSONValue) -> ValueDecoder {
        // The top object's path is empty, so its members (an entity's fields) build none.
        ValueDecoder(value: value, parentPath: decoder.codingPath, key: key)
    }

    private func decoder(_ key: Key) throws -> ValueDecoder { decoder(key, try member(key)) }

    func decodeNil(forKey key: Key) throws -> Bool { try member(key) == .null }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try decoder(key).decodeValue(T.self) }

    func decode(_ type: String.Type, forKey key: Key) throws -> String { try Scalars.string(member(key)) }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try Scalars.bool(member(key)) }

    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try Scalars.double(member(key)) }

    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try Scalars.integer(member(key), as: Int.self) }

    // One look-up each, where the protocol's defaults ask `contains`, `decodeNil` and `decode`.

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        try presentMember(key).map { try decoder(key, $0).decodeValue(T.self) }
    }

    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { try presentMember(key).map(Scalars.string) }

    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { try presentMember(key).map(Scalars.bool) }

    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? { try presentMember(key).map(Scalars.double) }

    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? {
        try presentMember(key).map { try Scalars.integer($0, as: Int.self) }
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try decoder(key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer { try decoder(key).unkeyedContainer() }

    func superDecoder() throws -> any Decoder { throw JSONValueDecoder.Unsure() }

    func superDecoder(forKey key: Key) throws -> any Decoder { throw JSONValueDecoder.Unsure() }
}

private struct ArrayContainer: UnkeyedDecodingContainer {
    let elements: [JSONValue]
    let codingPath: [any CodingKey]
    var currentIndex = 0

    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }

    private mutating func next() throws -> ValueDecoder {
        guard !isAtEnd else { throw JSONValueDecoder.Unsure() }
        defer { currentIndex += 1 }
        return ValueDecoder(value: elements[currentIndex], parentPath: codingPath, key: ArrayIndexKey(currentIndex))
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd else { throw JSONValueDecoder.Unsure() }
        guard elements[currentIndex] == .null else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try next().decodeValue(T.self) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        try next().container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { try next().unkeyedContainer() }

    mutating func superDecoder() throws -> any Decoder { throw JSONValueDecoder.Unsure() }
}

private struct SingleContainer: SingleValueDecodingContainer {
    let decoder: ValueDecoder
    var codingPath: [any CodingKey] { decoder.codingPath }

    func decodeNil() -> Bool { decoder.value == .null }

    func decode<T: Decodable>(_ type: T.Type) throws -> T { try decoder.decodeValue(T.self) }
}

/// The key of an array element in a coding path, as `JSONDecoder` and `JSONEncoder` name it
/// (the direct decoder's and encoder's paths).
struct ArrayIndexKey: CodingKey {
    let intValue: Int?
    let stringValue: String

    init(_ index: Int) {
        intValue = index
        stringValue = "Index \(index)"
    }

    init?(stringValue: String) { return nil }

    init?(intValue: Int) { self.init(intValue) }
}

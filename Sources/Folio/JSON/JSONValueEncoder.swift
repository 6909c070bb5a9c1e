internal import Foundation

/// Encodes an `Encodable` straight into a ``JSONValue``, without `JSONEncoder` writing bytes that
/// ``JSONParser`` then reads back: every upsert encodes its entity, and a bulk import spent most of
/// its commit there.
///
/// It answers only when it is sure to give what ``EntityCoder``'s `JSONEncoder` followed by the
/// parser gives: strings, booleans, integers, `nil`, `Date`s in Folio's form, and the keyed,
/// unkeyed and single-value containers that hold them. For anything else (a `Double`, a `Float`,
/// a `Decimal`, `Data`, a `URL`, `superEncoder`, a value that encodes nothing, deeper nesting than
/// the parser allows) it throws ``Unsure``, and the caller encodes through `JSONEncoder` instead,
/// which also gives the usual errors. The mirror of ``JSONValueDecoder``.
struct JSONValueEncoder {
    /// Thrown when the encoder cannot vouch for the result; never shown to users.
    struct Unsure: Error {}

    static func encode<T: Encodable>(_ value: T) throws -> JSONValue {
        let state = EncodingState()
        let root = Slot()
        try EncodingTarget(slot: root, state: state, parentPath: [], key: nil, depth: 0).encodeValue(value)
        guard !state.unsure, let result = root.resolved() else { throw Unsure() }
        return result
    }
}

/// Set when the value used something the encoder does not vouch for, where the `Encoder`
/// protocol gives no way to throw (a container of the wrong kind, `superEncoder`).
private final class EncodingState {
    var unsure = false
}

/// One place in the document being built: nothing yet, a finished value, or an object or array
/// that containers keep adding to.
private final class Slot {
    enum Content {
        case value(JSONValue)
        case object(Members)
        case array(Elements)
    }

    final class Members { var slots: [String: Slot] = [:] }
    final class Elements { var slots: [Slot] = [] }

    var content: Content?

    /// The finished value, or nil if some place was never filled.
    func resolved() -> JSONValue? {
        switch content {
        case nil:
            return nil
        case .value(let value):
            return value
        case .object(let members):
            var result = [String: JSONValue](minimumCapacity: members.slots.count)
            for (key, slot) in members.slots {
                guard let value = slot.resolved() else { return nil }
                result[key] = value
            }
            return .object(result)
        case .array(let elements):
            var result: [JSONValue] = []
            result.reserveCapacity(elements.slots.count)
            for slot in elements.slots {
                guard let value = slot.resolved() else { return nil }
                result.append(value)
            }
            return .array(result)
        }
    }
}

/// The encoder handed to a value's `encode(to:)`, writing into one slot.
private struct EncodingTarget: Encoder {
    let slot: Slot
    let state: EncodingState
    /// The path to the object or array holding this slot, and this slot's key in it (nil at the
    /// top): the whole path is built only when a type asks for it.
    let parentPath: [any CodingKey]
    let key: (any CodingKey)?
    let depth: Int
    var codingPath: [any CodingKey] { key.map { parentPath + [$0] } ?? parentPath }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        switch slot.content {
        case nil: slot.content = .object(Slot.Members())
        case .object?: break
        default: state.unsure = true
        }
        return KeyedEncodingContainer(ObjectWriter<Key>(target: self))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        switch slot.content {
        case nil: slot.content = .array(Slot.Elements())
        case .array?: break
        default: state.unsure = true
        }
        return ArrayWriter(target: self)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { SingleWriter(target: self) }

    /// The target of a member or element of this one's object or array.
    func child(_ key: any CodingKey, _ slot: Slot) -> EncodingTarget {
        EncodingTarget(slot: slot, state: state, parentPath: codingPath, key: key, depth: depth + 1)
    }

    /// Writes `value` into this slot: the scalar types directly, `Date` as Folio writes dates,
    /// anything else through its own `encode(to:)` (except the types `JSONEncoder` treats
    /// specially, and floating-point numbers, whose text is left to it).
    func encodeValue<T: Encodable>(_ value: T) throws {
        if let scalar = try Self.scalar(value) {
            slot.content = .value(scalar)
        } else {
            try encodeItself(value)
        }
    }

    /// Writes a value that is not a scalar through its own `encode(to:)`.
    func encodeItself<T: Encodable>(_ value: T) throws {
        // The parser refuses documents nested deeper than this; JSONEncoder then reports it.
        guard depth < JSONParser.maximumDepth else { throw JSONValueEncoder.Unsure() }
        try value.encode(to: self)
        if slot.content == nil { throw JSONValueEncoder.Unsure() }
    }

    /// The JSON of a scalar, nil for a value that encodes itself; throws for the types left to
    /// `JSONEncoder`. Types are compared by identity (a pointer comparison).
    static func scalar<T: Encodable>(_ value: T) throws -> JSONValue? {
        if T.self == String.self { return .string(unsafeBitCast(value, to: String.self)) }
        if T.self == Bool.self { return .bool(unsafeBitCast(value, to: Bool.self)) }
        if T.self == Int.self { return .number(String(unsafeBitCast(value, to: Int.self))) }
        if T.self == Date.self {
            guard let text = EntityCoder.format(unsafeBitCast(value, to: Date.self)) else { throw JSONValueEncoder.Unsure() }
            return .string(text)
        }
        if T.self == Int64.self { return .number(String(unsafeBitCast(value, to: Int64.self))) }
        if T.self == Int32.self { return .number(String(unsafeBitCast(value, to: Int32.self))) }
        if T.self == Int16.self { return .number(String(unsafeBitCast(value, to: Int16.self))) }
        if T.self == Int8.self { return .number(String(unsafeBitCast(value, to: Int8.self))) }
        if T.self == UInt.self { return .number(String(unsafeBitCast(value, to: UInt.self))) }
        if T.self == UInt64.self { return .number(String(unsafeBitCast(value, to: UInt64.self))) }
        if T.self == UInt32.self { return .number(String(unsafeBitCast(value, to: UInt32.self))) }
        if T.self == UInt16.self { return .number(String(unsafeBitCast(value, to: UInt16.self))) }
        if T.self == UInt8.self { return .number(String(unsafeBitCast(value, to: UInt8.self))) }
        if T.self == Double.self || T.self == Float.self || T.self == Decimal.self || T.self == Data.self || T.self == URL.self {
            throw JSONValueEncoder.Unsure()
        }
        return nil
    }
}

private struct ObjectWriter<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let target: EncodingTarget
    var codingPath: [any CodingKey] { target.codingPath }

    /// The slot of `key`, made empty (a key encoded twice keeps the last value, as in
    /// `JSONEncoder`).
    private func member(_ key: Key) -> Slot {
        let slot = Slot()
        guard case .object(let members)? = target.slot.content else {
            target.state.unsure = true
            return slot
        }
        members.slots[key.stringValue] = slot
        return slot
    }

    /// The slot of `key` for a nested container: the one already there, if any.
    private func nestedMember(_ key: Key) -> Slot {
        if case .object(let members)? = target.slot.content, let slot = members.slots[key.stringValue] { return slot }
        return member(key)
    }

    mutating func encodeNil(forKey key: Key) throws { member(key).content = .value(.null) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        // A scalar is written without a target of its own.
        if let scalar = try EncodingTarget.scalar(value) {
            member(key).content = .value(scalar)
        } else {
            try target.child(key, member(key)).encodeItself(value)
        }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        target.child(key, nestedMember(key)).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        target.child(key, nestedMember(key)).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        target.state.unsure = true
        return target.child(ArrayIndexKey(0), Slot())
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        target.state.unsure = true
        return target.child(key, Slot())
    }
}

private struct ArrayWriter: UnkeyedEncodingContainer {
    let target: EncodingTarget
    var codingPath: [any CodingKey] { target.codingPath }

    var count: Int {
        if case .array(let elements)? = target.slot.content { return elements.slots.count }
        return 0
    }

    /// A new slot at the end of the array.
    private func append() -> (EncodingTarget, Slot) {
        let slot = Slot()
        guard case .array(let elements)? = target.slot.content else {
            target.state.unsure = true
            return (target.child(ArrayIndexKey(0), slot), slot)
        }
        elements.slots.append(slot)
        return (target.child(ArrayIndexKey(elements.slots.count - 1), slot), slot)
    }

    mutating func encodeNil() throws { append().1.content = .value(.null) }

    mutating func encode<T: Encodable>(_ value: T) throws { try append().0.encodeValue(value) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        append().0.container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { append().0.unkeyedContainer() }

    mutating func superEncoder() -> any Encoder {
        target.state.unsure = true
        return append().0
    }
}

private struct SingleWriter: SingleValueEncodingContainer {
    let target: EncodingTarget
    var codingPath: [any CodingKey] { target.codingPath }

    mutating func encodeNil() throws { target.slot.content = .value(.null) }

    mutating func encode<T: Encodable>(_ value: T) throws { try target.encodeValue(value) }
}

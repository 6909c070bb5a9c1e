internal import Foundation

/// Turns entities into Folio's JSON values and back, through the entity's `Codable` conformance.
///
/// Dates are ISO 8601 strings in UTC with milliseconds (`2026-11-22T09:30:00.000Z`), readable in
/// an editor; decoding also accepts them without fractional seconds.
final class EntityCoder {
    private let encoder: JSONEncoder
    let decoder: JSONDecoder

    init() {
        encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            guard let text = Self.format(date) else {
                throw EncodingError.invalidValue(date, EncodingError.Context(codingPath: encoder.codingPath, debugDescription: "the date is not finite"))
            }
            try container.encode(text)
        }
        encoder.nonConformingFloatEncodingStrategy = .throw
        decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            if let date = ISO8601Date.parse(text) { return date }
            // Folio writes fractional seconds; a person may well type a date without them.
            do { return try Self.withFraction.parse(text) } catch {}
            do { return try Date.ISO8601FormatStyle().parse(text) } catch {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "\"\(text)\" is not an ISO 8601 date")
            }
        }
    }

    private static let withFraction = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    /// `2026-11-22T09:30:00.828Z`: the date rounded to the nearest millisecond, so that decoding
    /// the text and encoding it again gives the same text. (`ISO8601FormatStyle` truncates, and a
    /// parsed `.828` is a binary Double a hair below it, so every read-modify-write of an entity
    /// moved about half of its dates back by 1 ms.) Nil for a date that is not finite.
    static func format(_ date: Date) -> String? {
        let milliseconds = (date.timeIntervalSince1970 * 1000).rounded()
        guard milliseconds.isFinite else { return nil }
        if abs(milliseconds) < 1e15, let text = ISO8601Date.format(milliseconds: Int64(milliseconds)) { return text }
        return formatWithStyle(milliseconds)
    }

    /// ``format(_:)`` through Foundation's format style: any year (the hand-written form covers
    /// 1600 to 9999).
    static func formatWithStyle(_ milliseconds: Double) -> String? {
        guard milliseconds.isFinite else { return nil }
        let seconds = (milliseconds / 1000).rounded(.down)
        let fraction = String(Int(milliseconds - seconds * 1000) + 1000).dropFirst()
        return Date(timeIntervalSince1970: seconds).formatted(Date.ISO8601FormatStyle()).dropLast() + "." + fraction + "Z"
    }

    func encode<E: Entity>(_ entity: E) throws(FolioError) -> JSONValue {
        let value: JSONValue
        do { value = try encodeValue(entity) } catch { throw error.withEntity(entity.id.storageKey) }
        guard value.objectValue != nil else {
            throw FolioError(.encodingFailed, "\(E.self) must encode as a JSON object (a keyed container)", entityID: entity.id.storageKey)
        }
        return value
    }

    /// Encodes any value (a custom command's payload) to a JSON value.
    func encodeValue<V: Encodable>(_ value: V) throws(FolioError) -> JSONValue {
        do { return try JSONValueEncoder.encode(value) } catch {
            // Not sure of it: JSONEncoder decides, and names what is wrong.
        }
        return try encodeThroughJSONEncoder(value)
    }

    /// `value` as `JSONEncoder` writes it, parsed: what the direct encoder must give whenever it
    /// answers.
    func encodeThroughJSONEncoder<V: Encodable>(_ value: V) throws(FolioError) -> JSONValue {
        do {
            return try JSONParser.parse(Array(encoder.encode(value)))
        } catch let failure as JSONParser.Failure {
            throw FolioError(.encodingFailed, "JSONEncoder produced invalid JSON for \(V.self): \(failure.message)")
        } catch {
            throw FolioError(.encodingFailed, "could not encode \(V.self) to JSON: \(error)")
        }
    }

    /// Decodes `value` as `T`: straight from the JSON value when ``JSONValueDecoder`` can vouch
    /// for the result, through `JSONDecoder` otherwise (which also gives the usual errors).
    func decodeValue<T: Decodable>(_ type: T.Type, from value: JSONValue) throws -> T {
        do { return try JSONValueDecoder.decode(T.self, from: value) } catch {
            // Not sure of it: JSONDecoder decides, and names what is wrong.
        }
        return try decoder.decode(T.self, from: Data(JSONWriter.compact(value)))
    }

    func decode<E: Entity>(_ type: E.Type, from value: JSONValue, id: String, path: String) throws(FolioError) -> E {
        do {
            return try decodeValue(E.self, from: value)
        } catch {
            if let culprit = numberCulprit(E.self, in: value, error: error) {
                var failure = Self.error(DecodingFailure(field: culprit.path, message: culprit.message), type: E.self, id: id, path: path)
                failure.fieldPath = culprit.path
                throw failure
            }
            throw Self.error(DecodingFailure(field: [], message: Self.describe(error)), type: E.self, id: id, path: path)
        }
    }

    /// The entity's JSON as its Swift type sees it: the keys it decodes and encodes again; nil
    /// when the stored JSON does not decode as `E` (then there are no known keys to tell unknown
    /// ones from, and an upsert keeps every stored field its new value does not set).
    func roundTrip<E: Entity>(_ type: E.Type, _ value: JSONValue) -> JSONValue? {
        do { return try encode(decodeValue(E.self, from: value)) } catch { return nil }
    }

    static func describe(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "\(error)" }
        func path(_ context: DecodingError.Context) -> String {
            let keys = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
            return keys.isEmpty ? "" : " at \(keys.hasPrefix(".") ? String(keys.dropFirst()) : keys)"
        }
        switch error {
        case .keyNotFound(let key, let context): return "missing field \"\(key.stringValue)\"\(path(context))"
        case .typeMismatch(let type, let context): return "expected \(type)\(path(context)): \(context.debugDescription)"
        case .valueNotFound(let type, let context): return "expected \(type) but found null\(path(context))"
        case .dataCorrupted(let context): return "\(context.debugDescription)\(path(context))"
        @unknown default: return "\(error)"
        }
    }
}

/// Keeping fields the Swift type does not know.
enum UnknownFields {
    /// The new JSON of an entity, plus every field of the stored JSON that the entity's type does
    /// not know (it is absent from `known`, the stored JSON as the type decodes and re-encodes it).
    /// Nested objects are merged the same way.
    static func merge(stored: JSONValue, known: JSONValue, new: JSONValue) -> JSONValue {
        guard case .object(let storedMembers) = stored, case .object(let knownMembers) = known,
            case .object(var result) = new
        else { return new }
        for (key, value) in storedMembers {
            if let knownValue = knownMembers[key] {
                if let newValue = result[key], newValue.objectValue != nil, value.objectValue != nil {
                    result[key] = merge(stored: value, known: knownValue, new: newValue)
                }
            } else if result[key] == nil {
                result[key] = value
            }
        }
        return .object(result)
    }

    /// Whether `new` sets every field of `stored`, and of each object both hold under one key:
    /// then ``merge(stored:known:new:)`` gives `new` whatever the type knows, and the stored
    /// entity need not be decoded and encoded again to find out (an upsert of an entity whose
    /// shape did not change, the common case).
    static func covers(_ new: JSONValue, _ stored: JSONValue) -> Bool {
        guard case .object(let newMembers) = new, case .object(let storedMembers) = stored else { return true }
        for (key, value) in storedMembers {
            guard let newValue = newMembers[key] else { return false }
            if !covers(newValue, value) { return false }
        }
        return true
    }
}

import Foundation

/// Any JSON value, decoded leniently: the server keeps the fields it does not know exactly as
/// they came, so a newer client's additions survive a round trip through the server.
///
/// Integers are kept as integers (up to 64 bits) so they are written back digit for digit.
public enum JSONValue: Codable, Sendable, Equatable {
    case null
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    public init(from decoder: any Decoder) throws {
        // Each `try?` below probes for one JSON type; the last probe's error is the one thrown.
        if var array = try? decoder.unkeyedContainer() {
            var elements: [JSONValue] = []
            while !array.isAtEnd { elements.append(try array.decode(JSONValue.self)) }
            self = .array(elements)
            return
        }
        if let object = try? decoder.container(keyedBy: AnyKey.self) {
            var members: [String: JSONValue] = [:]
            for key in object.allKeys { members[key.stringValue] = try object.decode(JSONValue.self, forKey: key) }
            self = .object(members)
            return
        }
        let value = try decoder.singleValueContainer()
        if value.decodeNil() {
            self = .null
        } else if let bool = try? value.decode(Bool.self) {
            self = .bool(bool)
        } else if let integer = try? value.decode(Int64.self) {
            self = .integer(integer)
        } else if let number = try? value.decode(Double.self) {
            self = .number(number)
        } else {
            self = .string(try value.decode(String.self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .null:
            var container = encoder.singleValueContainer()
            try container.encodeNil()
        case .bool(let bool):
            var container = encoder.singleValueContainer()
            try container.encode(bool)
        case .integer(let integer):
            var container = encoder.singleValueContainer()
            try container.encode(integer)
        case .number(let number):
            var container = encoder.singleValueContainer()
            try container.encode(number)
        case .string(let string):
            var container = encoder.singleValueContainer()
            try container.encode(string)
        case .array(let elements):
            var container = encoder.unkeyedContainer()
            for element in elements { try container.encode(element) }
        case .object(let members):
            var container = encoder.container(keyedBy: AnyKey.self)
            for (key, value) in members { try container.encode(value, forKey: AnyKey(key)) }
        }
    }

    /// The value's JSON type, for error messages: `"a string"`, `"null"`, …
    var typeDescription: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .integer, .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }

    var stringValue: String? { if case .string(let text) = self { text } else { nil } }
    var boolValue: Bool? { if case .bool(let bool) = self { bool } else { nil } }
    var integerValue: Int64? { if case .integer(let integer) = self { integer } else { nil } }
    var objectValue: [String: JSONValue]? { if case .object(let members) = self { members } else { nil } }
}

/// A JSON object: member name to value.
public typealias JSONObject = [String: JSONValue]

/// A coding key for any member name.
struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int?
    init(_ string: String) { stringValue = string }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) {
        stringValue = String(intValue)
        self.intValue = intValue
    }
}

/// Reading and writing JSON bytes.
enum JSONCoding {
    /// Parses bytes into a value; the error says where the JSON is broken, or which member name
    /// appears twice in one object (refused: see ``RepeatedMembers``).
    static func parse(_ data: Data) throws(RequestError) -> JSONValue {
        do {
            let value = try JSONDecoder().decode(JSONValue.self, from: data)
            if let repeated = RepeatedMembers.first(in: data) {
                throw RequestError(400, "the member \(repeated.debugDescription) appears twice in one object", field: repeated)
            }
            return value
        } catch let error as RequestError {
            throw error
        } catch let DecodingError.dataCorrupted(context) {
            let underlying = (context.underlyingError as? NSError)?.userInfo[NSDebugDescriptionErrorKey] as? String
            throw RequestError(400, "the body is not valid JSON: \(underlying ?? context.debugDescription)", field: "body")
        } catch {
            throw RequestError(400, "the body is not valid JSON: \(error)", field: "body")
        }
    }

    /// Compact JSON with sorted keys and unescaped slashes.
    /// - Throws: An `EncodingError` for a non-finite number (parsed JSON holds none).
    static func data<T: Encodable>(_ value: T) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(value)
    }
}

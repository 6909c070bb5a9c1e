/// Finding the number a Swift type cannot hold.
///
/// Folio keeps numbers as their JSON text, so a file with `"priority": 1.5` (an `Int` field) or
/// `1e400` (beyond `Double`) parses fine; it is `JSONDecoder` that fails, and on Linux it says
/// only "The given data was not valid JSON." with no field. This finds the field: each number of
/// the entity in turn is replaced by `0`, and the first whose replacement makes that failure go
/// away is the one at fault.
enum NumberCulprit {
    struct Found: Equatable {
        /// The member keys (and `[index]`es) from the entity down to the number.
        var path: [String]
        var number: String

        var field: String {
            path.reduce("") { text, part in part.hasPrefix("[") ? text + part : (text.isEmpty ? part : text + "." + part) }
        }

        var message: String {
            let reach =
                Double(number).map { $0.isInfinite } ?? true
                ? "it is beyond the range of every Swift number type (Double reaches about 1.8e308)"
                : "its Swift type cannot hold it (an integer field takes whole numbers within its range; Float and Double have a range too)"
            return "the number \(number) in field \"\(field)\" does not fit the field's Swift type: \(reach)"
        }
    }

    /// The most numbers tried (each try is one decode); an entity with more is searched no further.
    static let maximumTries = 256

    /// The first number whose replacement by 0 makes `decodes` succeed, or nil.
    static func find(in entity: JSONValue, decodes: (JSONValue) -> Bool) -> Found? {
        numbers(in: entity).prefix(maximumTries).first { decodes(replacing(entity, at: $0.path[...], with: .number("0"))) }
    }

    /// Every number of an entity with its path, in the order of the keys.
    static func numbers(in entity: JSONValue) -> [Found] {
        var numbers: [Found] = []
        collect(entity, path: [], into: &numbers)
        return numbers
    }

    private static func collect(_ value: JSONValue, path: [String], into numbers: inout [Found]) {
        switch value {
        case .number(let text): numbers.append(Found(path: path, number: text))
        case .object(let members):
            for key in JSONWriter.sortedKeys(members) { collect(members[key]!, path: path + [key], into: &numbers) }
        case .array(let items):
            for (index, item) in items.enumerated() { collect(item, path: path + ["[\(index)]"], into: &numbers) }
        case .null, .bool, .string: break
        }
    }

    private static func replacing(_ root: JSONValue, at path: ArraySlice<String>, with new: JSONValue) -> JSONValue {
        guard let part = path.first else { return new }
        switch root {
        case .object(var members):
            if let child = members[part] { members[part] = replacing(child, at: path.dropFirst(), with: new) }
            return .object(members)
        case .array(var items):
            if let index = Int(part.dropFirst().dropLast()), items.indices.contains(index) {
                items[index] = replacing(items[index], at: path.dropFirst(), with: new)
            }
            return .array(items)
        case .null, .bool, .number, .string:
            return root
        }
    }
}

extension EntityCoder {
    /// For a failure `JSONDecoder` gives no field for (on JSON Folio already parsed, only a number
    /// can cause it): the number at fault.
    func numberCulprit<E: Entity>(_ type: E.Type, in value: JSONValue, error: any Error) -> NumberCulprit.Found? {
        guard case DecodingError.dataCorrupted(let context)? = error as? DecodingError, context.codingPath.isEmpty else { return nil }
        return NumberCulprit.find(in: value) { candidate in
            do {
                _ = try decodeValue(E.self, from: candidate)
                return true
            } catch {
                return false
            }
        }
    }
}

extension NumberCulprit {
    /// The numbers of an entity that no Swift number type holds (beyond `Double`'s range), for
    /// `folio verify`, which does not know the app's types.
    static func outOfRange(in entity: JSONValue) -> [Found] {
        numbers(in: entity).filter { Double($0.number).map { $0.isInfinite } ?? true }
    }
}

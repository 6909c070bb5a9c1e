/// The JSON shape of a partition file (FORMAT.md, "Partition files"):
///
/// ```json
/// {
///   "entities": {
///     "<id>": { …the entity's JSON… }
///   },
///   "versions": {
///     "<id>": "<the server's version of the entity>"
///   }
/// }
/// ```
///
/// `versions` is present only once the sync engine has learnt a version. Other top-level keys are
/// kept as they are when Folio rewrites the file.
enum PartitionFile {
    struct Contents {
        var entities: [String: JSONValue]
        var versions: [String: String] = [:]
        var extra: [String: JSONValue]
    }

    static func decode(_ bytes: [UInt8], path: String) throws(FolioError) -> Contents {
        let value: JSONValue
        do {
            value = try JSONParser.parse(bytes)
        } catch {
            throw FolioError(.corruptFile, "invalid JSON: \(error.message)", path: path, line: error.line, column: error.column)
        }
        guard case .object(var members) = value else {
            throw FolioError(.corruptFile, "expected a JSON object with an \"entities\" object at the top", path: path, line: 1, column: 1)
        }
        guard case .object(let entities)? = members.removeValue(forKey: "entities") else {
            throw FolioError(.corruptFile, "missing \"entities\" object at the top level", path: path, line: 1, column: 1)
        }
        for (id, entity) in entities {
            do { try Names.validateID(id) } catch {
                throw FolioError(.corruptFile, "invalid entity id: \(error.message)", path: path,
                                 line: lineOfKey(id, in: bytes), entityID: id)
            }
            guard entity.objectValue != nil else {
                throw FolioError(.corruptFile, "entity \"\(id)\" is not a JSON object", path: path,
                                 line: lineOfKey(id, in: bytes), entityID: id)
            }
        }
        var versions: [String: String] = [:]
        if let stored = members.removeValue(forKey: "versions") {
            guard case .object(let pairs) = stored else {
                throw FolioError(.corruptFile, "\"versions\" must be an object from id to version string", path: path,
                                 line: lineOfKey("versions", in: bytes))
            }
            for (id, version) in pairs {
                guard let text = version.stringValue else {
                    throw FolioError(.corruptFile, "the version of \"\(id)\" must be a string", path: path,
                                     line: lineOfKey(id, in: bytes), entityID: id)
                }
                versions[id] = text
            }
        }
        return Contents(entities: entities, versions: versions, extra: members)
    }

    static func encode(_ contents: Contents) -> [UInt8] {
        var members = contents.extra
        members["entities"] = .object(contents.entities)
        if !contents.versions.isEmpty { members["versions"] = .object(contents.versions.mapValues { .string($0) }) }
        return JSONWriter.pretty(.object(members))
    }

    /// The line where `"key"` first appears, to point a person at a shape error.
    private static func lineOfKey(_ key: String, in bytes: [UInt8]) -> Int? {
        let needle = JSONWriter.compact(.string(key))
        guard needle.count <= bytes.count else { return nil }
        var line = 1
        var index = 0
        while index + needle.count <= bytes.count {
            if bytes[index] == 0x0A { line += 1 }
            if bytes[index] == needle[0] && Array(bytes[index..<(index + needle.count)]) == needle { return line }
            index += 1
        }
        return nil
    }
}

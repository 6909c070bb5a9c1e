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
    struct Contents: Equatable {
        var entities: [String: JSONValue]
        var versions: [String: String] = [:]
        var extra: [String: JSONValue]
        /// The revision the file names (FORMAT.md, "Revisions"): nil for a file without one.
        var revision: Revision? = nil

        /// The hash a revision of this content names: of its canonical bytes without the
        /// revision's members.
        var contentHash: ContentHash {
            var bare = self
            bare.revision = nil
            return ContentHash(PartitionFile.encode(bare))
        }

        /// Whether the content is exactly the revision it names (not a save made from it).
        var isUneditedRevision: Bool {
            revision.map { $0.hash == contentHash } ?? false
        }
    }

    static func decode(_ bytes: [UInt8], path: String) throws(FolioError) -> Contents {
        let value: JSONValue
        do {
            value = try JSONParser.parse(bytes)
        } catch {
            throw FolioError(.corruptFile, "invalid JSON: \(error.message)", path: path, line: error.line, column: error.column)
        }
        if let problem = problems(in: value, bytes: bytes, path: path).first { throw problem.error }
        guard case .object(var members) = value, case .object(let entities)? = members.removeValue(forKey: "entities") else {
            throw FolioError(.corruptFile, "missing \"entities\" object at the top level", path: path, line: 1, column: 1)
        }
        let versions = members.removeValue(forKey: "versions")?.objectValue?.compactMapValues(\.stringValue) ?? [:]
        let revision = Revision.take(from: &members)
        return Contents(entities: entities, versions: versions, extra: members, revision: revision)
    }

    /// The revision a file's bytes name; nil when they name none or do not parse.
    static func namedRevision(_ bytes: [UInt8], path: String) -> Revision? {
        do { return try decode(bytes, path: path).revision } catch { return nil }
    }

    static func encode(_ contents: Contents) -> [UInt8] {
        var members = contents.extra
        members["entities"] = .object(contents.entities)
        if !contents.versions.isEmpty { members["versions"] = .object(contents.versions.mapValues { .string($0) }) }
        contents.revision?.put(into: &members)
        return JSONWriter.pretty(.object(members))
    }

    /// What is wrong with a partition file's shape.
    enum Problem {
        /// An entity id that is not a valid name (Names.validateID).
        case badID
        /// Anything else: not an object, no `entities`, an entity or `versions` of the wrong type.
        case badShape
    }

    /// Every way a parsed partition file breaks the format, in key order, each with its line and
    /// column: ``decode(_:path:)`` throws the first, `folio verify` reports them all. Valid files
    /// cost one pass over the ids; positions are looked up only when something is wrong.
    static func problems(in value: JSONValue, bytes: [UInt8], path: String) -> [(kind: Problem, error: FolioError)] {
        var locator: JSONKeyLocator?
        func problem(_ kind: Problem, _ message: String, at keyPath: [String], id: String? = nil) -> (kind: Problem, error: FolioError) {
            if locator == nil { locator = JSONKeyLocator(bytes) }
            let position = keyPath.isEmpty ? nil : locator!.position(of: keyPath)
            return (kind, FolioError(.corruptFile, message, path: path, line: position?.line ?? 1, column: position?.column ?? 1, entityID: id))
        }
        guard case .object(let members) = value else {
            return [problem(.badShape, "expected a JSON object with an \"entities\" object at the top", at: [])]
        }
        guard case .object(let entities)? = members["entities"] else {
            return [problem(.badShape, "missing \"entities\" object at the top level", at: members["entities"] == nil ? [] : ["entities"])]
        }
        var found: [(kind: Problem, error: FolioError)] = []
        for (id, entity) in entities {
            do { try Names.validateID(id) } catch {
                found.append(problem(.badID, "invalid entity id: \(error.message)", at: ["entities", id], id: id))
                continue
            }
            if entity.objectValue == nil {
                found.append(problem(.badShape, "entity \"\(id)\" is not a JSON object", at: ["entities", id], id: id))
            } else if entity.depth > Limits.entityDepth {
                found.append(
                    problem(
                        .badShape, "entity \"\(id)\" nests \(entity.depth) levels deep; Folio's limit is \(Limits.entityDepth)", at: ["entities", id], id: id))
            }
        }
        if let stored = members["versions"] {
            if case .object(let pairs) = stored {
                for (id, version) in pairs where version.stringValue == nil {
                    found.append(problem(.badShape, "the version of \"\(id)\" must be a string", at: ["versions", id], id: id))
                }
            } else {
                found.append(problem(.badShape, "\"versions\" must be an object from id to version string", at: ["versions"]))
            }
        }
        return found.sorted { ($0.error.line ?? 0, $0.error.column ?? 0) < ($1.error.line ?? 0, $1.error.column ?? 0) }
    }
}

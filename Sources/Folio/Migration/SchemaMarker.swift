/// The schema part of `folio.json`: which migrations the store's data has been through.
///
/// ```json
/// {
///   "format": 1,
///   "schema": {
///     "migrations": ["1-todo-notes", "2-rename-title"],
///     "version": 2
///   },
///   "store": "6F9619FF-8B86-D011-B42D-00C04FC964FF"
/// }
/// ```
///
/// `version` is the number of migrations applied; `migrations` names them, in order. A store
/// without `schema` is at version 0.
enum SchemaMarker {
    static let key = "schema"

    static func json(migrations: [String]) -> JSONValue {
        .object(["version": .number(String(migrations.count)), "migrations": .array(migrations.map(JSONValue.string))])
    }

    /// The marker's members and the migrations it records.
    static func read(_ fileSystem: FileSystem) throws(FolioError) -> (marker: [String: JSONValue], migrations: [String]) {
        guard let (bytes, _) = try fileSystem.read(StoreLayout.marker) else {
            throw FolioError(.unsupportedFormat, "not a Folio store: there is no folio.json", path: StoreLayout.marker)
        }
        let value: JSONValue
        do { value = try JSONParser.parse(bytes) } catch {
            throw FolioError(.corruptFile, "invalid JSON: \(error.message)", path: StoreLayout.marker, line: error.line, column: error.column)
        }
        guard case .object(let members) = value else {
            throw FolioError(.corruptFile, "the format marker is not a JSON object", path: StoreLayout.marker, line: 1, column: 1)
        }
        guard let schema = members[key] else { return (members, []) }
        guard case .array(let names)? = schema["migrations"], let version = schema["version"]?.integerValue else {
            throw FolioError(.corruptFile, "\"schema\" must hold \"version\" (an integer) and \"migrations\" (an array of names)", path: StoreLayout.marker)
        }
        let migrations = names.compactMap(\.stringValue)
        guard migrations.count == names.count, Int64(migrations.count) == version else {
            throw FolioError(.corruptFile, "\"schema\": version \(version) but \(names.count) migration names", path: StoreLayout.marker)
        }
        return (members, migrations)
    }
}

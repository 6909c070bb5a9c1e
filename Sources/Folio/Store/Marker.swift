internal import Foundation

/// The format marker `folio.json` at the root of every store:
///
/// ```json
/// {
///   "format": 1,
///   "store": "6F9619FF-8B86-D011-B42D-00C04FC964FF"
/// }
/// ```
///
/// `format` is the layout version this store was written with; `store` identifies the store (and
/// every copy of it: the idempotency keys of commands use the folder instance's writer id,
/// ``WriterID``).
enum Marker {
    /// Names a folder may hold before it becomes a store: git's, made by `git init` or a clone.
    static let versionControl: Set<String> = [".git", ".gitignore", ".gitattributes", ".gitkeep"]
    /// Creates the marker in a new (empty) folder, or checks the existing one. Only with the
    /// writers' lock held.
    /// - Returns: The store's id.
    static func ensure(in fileSystem: FileSystem, create: Bool = true) throws(FolioError) -> String {
        if let (bytes, _) = try fileSystem.read(StoreLayout.marker) {
            let value: JSONValue
            do { value = try JSONParser.parse(bytes) } catch {
                throw FolioError(.corruptFile, "invalid JSON: \(error.message)", path: StoreLayout.marker, line: error.line, column: error.column)
            }
            guard let format = value["format"]?.integerValue else {
                throw FolioError(.unsupportedFormat, "no integer \"format\" in the format marker", path: StoreLayout.marker)
            }
            guard format <= StoreLayout.formatVersion else {
                throw FolioError(
                    .unsupportedFormat, "this store has format \(format); this version of Folio reads format \(StoreLayout.formatVersion) and older",
                    path: StoreLayout.marker)
            }
            guard let store = value["store"]?.stringValue, !store.isEmpty, store.utf8.count <= 128 else {
                throw FolioError(.corruptFile, "no \"store\" id string in the format marker", path: StoreLayout.marker)
            }
            return store
        }
        guard create else {
            throw FolioError(
                .unsupportedFormat, "there is no \(StoreLayout.marker): not a Folio store (opened read-only, so Folio does not create one)", path: ".")
        }
        // Version-control metadata (a `git init` made first) is no one's data.
        let others = try fileSystem.list("").filter { $0.name != StoreLayout.machinery && !Self.versionControl.contains($0.name) }
        guard others.isEmpty else {
            throw FolioError(
                .unsupportedFormat, "the folder is not empty and has no \(StoreLayout.marker): it is not a Folio store (Folio will not write into it)",
                path: ".")
        }
        let store = UUID().uuidString
        let marker: JSONValue = .object([
            "format": .number(String(StoreLayout.formatVersion)),
            "store": .string(store),
        ])
        try AtomicFile(fileSystem: fileSystem).replace(StoreLayout.marker, with: JSONWriter.pretty(marker))
        try fileSystem.syncDirectory("")
        return store
    }
}

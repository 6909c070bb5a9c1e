public import Foundation

/// A data file's history, and bringing an older version of it back on purpose (FORMAT.md,
/// "Restoring on purpose"; `folio restore`).
extension Store {
    /// One version a data file's history keeps.
    public struct FileVersion: Sendable, Equatable {
        /// How `restore(_:to:)` names it: `<writer>:<number>` for a revision, else the
        /// version's name in `.folio/versions/`.
        public var name: String
        /// When it was kept.
        public var date: Date
        /// How many entities it holds.
        public var entityCount: Int
        /// Whether it is a save someone made (not a revision Folio wrote or read unedited).
        public var isSave: Bool
    }

    /// The versions of a data file that its history keeps, newest first: the revisions Folio
    /// wrote or read and the saves people made.
    /// - Parameter path: The data file, relative to the store (`todos/2026-11/2026-11-22.json`).
    /// - Returns: The versions, newest first; the first revision is Folio's current state.
    /// - Throws: ``FolioError`` if `path` is not a data file's path, or the history cannot be read.
    public func history(of path: String) async throws -> [FileVersion] {
        try await read { engine throws(FolioError) in
            guard engine.partitionAddress(of: path) != nil else {
                throw FolioError(
                    .invalidName, "not the path of a data file (<collection>.json, <collection>/<YYYY-MM>.json or <collection>/<YYYY-MM>/<YYYY-MM-DD>.json)",
                    path: path)
            }
            let kept = engine.keptVersions
            var found: [FileVersion] = []
            for version in try kept.versions(of: path).reversed() {
                guard let bytes = try kept.bytes(of: version, path: path),
                    let identity = try engine.fileSystem.identity(KeptVersions.folder(of: path) + "/" + version.name)
                else { continue }
                let contents: PartitionFile.Contents
                do { contents = try PartitionFile.decode(bytes, path: path) } catch { continue }
                let isRevision = !version.isEdit && contents.isUneditedRevision
                found.append(
                    FileVersion(
                        name: isRevision ? "\(version.writer ?? ""):\(version.number)" : version.name,
                        date: Date(timeIntervalSince1970: Double(identity.modified) / 1e9),
                        entityCount: contents.entities.count, isSave: !isRevision))
            }
            return found
        }
    }

    /// Makes a kept version of a data file the store's state again: its entities come back as they
    /// were, and the entities it lacks are deleted (for a collection that pushes, sent as deletes),
    /// in one transaction. It is saved over the file as an edit of Folio's current revision, and
    /// adopted like any hand edit.
    /// - Parameters:
    ///   - path: The data file, relative to the store.
    ///   - version: A name from ``history(of:)``.
    /// - Throws: ``FolioError`` if there is no such version, or the file cannot be written.
    public func restore(_ path: String, to version: String) async throws {
        try await read { engine throws(FolioError) in
            guard engine.partitionAddress(of: path) != nil else {
                throw FolioError(.invalidName, "not the path of a data file", path: path)
            }
            let kept = engine.keptVersions
            let versions = try kept.versions(of: path)
            func contents(_ version: KeptVersions.Version) throws(FolioError) -> PartitionFile.Contents? {
                guard let bytes = try kept.bytes(of: version, path: path) else { return nil }
                return try PartitionFile.decode(bytes, path: path)
            }
            guard let newest = versions.last(where: { !$0.isEdit }), let current = try contents(newest) else {
                throw FolioError(.invalidName, "Folio keeps no version of this file", path: path)
            }
            let wanted = versions.last { $0.name == version || (!$0.isEdit && "\($0.writer ?? ""):\($0.number)" == version) }
            guard let wanted, var target = try contents(wanted) else {
                throw FolioError(.invalidName, "no kept version named \(version) (folio restore --list shows them)", path: path)
            }
            // An edit of Folio's current revision: merged against it, the file is taken as it is.
            target.revision = current.revision
            target.versions = current.versions
            target.extra = current.extra
            try AtomicFile(fileSystem: engine.fileSystem).replace(path, with: PartitionFile.encode(target))
        }
        try await checkpoint()
    }
}

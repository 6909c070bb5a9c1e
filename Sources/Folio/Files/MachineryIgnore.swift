/// `.folio/.gitignore`: keeps the store's machinery out of version control (FORMAT.md, "Git").
///
/// The journal, the outbox's marks, the kept versions and the writer id belong to one folder
/// instance: committed and pulled into another clone, they would make every merge conflict in
/// files no person should merge, and the clone would open as a torn copy. The data files and
/// `folio.json` are what a repository holds. Written at every read-write open that finds it
/// missing; a person may change it (Folio never rewrites one that exists).
enum MachineryIgnore {
    static let path = StoreLayout.machinery + "/.gitignore"
    static let contents = """
        # Folio's machinery (journal, outbox marks, kept versions, writer id) belongs to this folder
        # only: commit the data files and folio.json, never this folder (FORMAT.md, "Git").
        *

        """

    /// Writes the file when it is missing. Only with the writers' lock held.
    static func ensure(in fileSystem: FileSystem) throws(FolioError) {
        guard try fileSystem.identity(path) == nil else { return }
        try AtomicFile(fileSystem: fileSystem).replace(path, with: Array(contents.utf8), synced: false)
    }
}

/// What in the folder needs a person: files that are not data, and data files that cannot be read.
extension Store {
    /// The files among the data folders that are not data: sync-tool conflict copies, temporary
    /// files, editor backups, anything else. Folio never reads them as data and never deletes
    /// them; a conflict copy needs someone to merge it into its original and delete it.
    /// (While the store is observed, a conflict copy that appears is also logged as a warning.)
    /// - Returns: The files, by path.
    /// - Throws: ``FolioError`` if a folder cannot be listed.
    public func strayFiles() async throws -> [StrayFile] {
        try await read { engine throws(FolioError) in try engine.strayFiles() }
    }

    /// The data files this process found broken (a hand edit that is not valid JSON, say), each
    /// with the file, line and column. Until one is fixed, the last good state read from it is
    /// served, changes to it wait in the journal, and the file is never overwritten.
    /// - Returns: One error per broken file, by path.
    /// - Throws: ``FolioError/Code/storeClosed`` if the store is closed.
    public func unreadableFiles() async throws -> [FolioError] {
        try await read { engine throws(FolioError) in
            var problems: [String: FolioError] = [:]
            for partition in engine.unreadablePartitions { problems[partition.address.path] = partition.unreadable }
            for (address, problem) in engine.filesNotIndexed { problems[address.path] = problem }
            return problems.keys.sorted().map { problems[$0]! }
        }
    }

    /// The merges of data files this process made that a person may want to know about, oldest
    /// first (at most the last 100): a file whose base Folio did not know (no revision, or one older
    /// than the history keeps), merged without deleting anything, and files whose entities were
    /// changed both in the file and by Folio (merged field by field, the file's values first).
    /// FORMAT.md, "Editing by hand". Each is also logged as a warning when it happens.
    /// - Returns: The reports, oldest first.
    /// - Throws: ``FolioError/Code/storeClosed`` if the store is closed.
    public func mergeReports() async throws -> [MergeReport] {
        try await read { engine throws(FolioError) in engine.mergeReports }
    }
}

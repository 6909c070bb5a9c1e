/// Whether the folder is a copy of a live store whose files and journal are from different
/// instants (``CopyCheck``), the check every open makes before it replays anything.
extension FolderScan {
    func checkCopy() throws {
        let log: WrittenLog.Contents
        do {
            guard let contents = try WrittenLog(fileSystem: fileSystem).read() else { return }
            log = contents
        } catch {
            report(.warning, .machinery, WrittenLog.path, "\(error.message): copies of this folder cannot be checked until the next open makes it anew")
            return
        }
        let check = CopyCheck(fileSystem: fileSystem)
        guard try check.isCopy(log) else { return }
        let first = journal.header?.firstTransaction
        let end = (first ?? 0) + UInt64(records.count)
        let findings = try check.findings(log, firstTransaction: first, end: end).findings
        for finding in findings {
            report(
                .error, .inconsistentCopy, finding.path,
                "\(finding.message): this folder is a copy taken while Folio was writing the store, and may hold part of a transaction; it will not open. Copy it again from a folder no process is writing, or use `folio snapshot`"
            )
        }
    }
}

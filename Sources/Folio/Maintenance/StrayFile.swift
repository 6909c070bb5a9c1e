/// Files that are not data but often sit in a synced or edited folder: conflict copies of sync
/// tools, rsync's temp files, editors' backups. Folio never reads them as data; `verify` reports
/// them so a person can merge or delete them.
enum StrayFile {
    /// What a file name looks like, when it is not one of Folio's own names.
    static func classify(_ name: String) -> (kind: StoreProblem.Kind, severity: StoreProblem.Severity, message: String) {
        if name.contains(".sync-conflict-") || name.contains("conflicted copy") || name.contains("(Case Conflict") {
            return (.conflictCopy, .warning, "a sync tool's conflict copy: Folio does not read it; merge what you need into the original by hand, then delete it")
        }
        if isNumberedDuplicate(name) {
            return (.conflictCopy, .warning, "looks like a duplicate made by a sync tool or file manager (\"name 2.json\"): Folio does not read it; merge what you need into the original by hand, then delete it")
        }
        if name.hasSuffix("~") || (name.hasPrefix("#") && name.hasSuffix("#")) || isSwapFile(name) {
            return (.editorFile, .warning, "an editor's backup or swap file: Folio does not read it; delete it when the editor is closed")
        }
        if isRsyncTemp(name) {
            return (.tempFile, .warning, "looks like rsync's temp file (a transfer in progress or cut short): Folio does not read it; delete it if no transfer is running")
        }
        if [".DS_Store", "Thumbs.db", "desktop.ini", ".stfolder", ".stignore", ".dropbox"].contains(name) {
            return (.strayFile, .note, "operating system or sync tool metadata: Folio ignores it")
        }
        return (.strayFile, .warning, "not part of the Folio format: Folio ignores it (move it out of the store, or fix its name if it was meant to be data)")
    }

    /// `tags 2.json`, `2026-11-22 3.json`: Finder and iCloud Drive duplicates.
    private static func isNumberedDuplicate(_ name: String) -> Bool {
        guard name.hasSuffix(".json") else { return false }
        let stem = name.dropLast(5)
        guard let space = stem.lastIndex(of: " ") else { return false }
        let number = stem[stem.index(after: space)...]
        return !number.isEmpty && number.allSatisfy(\.isASCII) && number.allSatisfy(\.isNumber)
    }

    /// Vim's `.name.swp` (and `.swo`, `.swx`…).
    private static func isSwapFile(_ name: String) -> Bool {
        guard name.hasPrefix("."), let dot = name.lastIndex(of: ".") else { return false }
        let suffix = name[name.index(after: dot)...]
        return suffix.count == 3 && suffix.hasPrefix("sw")
    }

    /// rsync writes `.name.XXXXXX` (six random characters) and renames it at the end.
    private static func isRsyncTemp(_ name: String) -> Bool {
        guard name.hasPrefix("."), let dot = name.lastIndex(of: "."), dot != name.startIndex else { return false }
        let suffix = name[name.index(after: dot)...]
        return suffix.count == 6 && suffix.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) }
    }
}

/// How `verify` reports a file that is not data (``StrayFile`` says what it looks like): its
/// problem kind, severity and the advice for the person reading the report.
enum StrayFileProblem {
    /// Operating-system and sync-tool metadata: harmless, a note.
    private static let metadata: Set<String> = [
        ".DS_Store", "Thumbs.db", "desktop.ini", ".stfolder", ".stignore", ".dropbox",
        ".git", ".gitignore", ".gitattributes", ".gitkeep",
    ]

    static func classify(_ name: String) -> (kind: StoreProblem.Kind, severity: StoreProblem.Severity, message: String) {
        if metadata.contains(name) {
            return (.strayFile, .note, "operating system, version control or sync tool metadata: Folio ignores it")
        }
        switch StrayFile.kind(ofName: name) {
        case .conflictCopy(let original):
            return (
                .conflictCopy, .warning,
                "a conflict copy of \(original) made by a sync tool or file manager: Folio does not read it; merge what you need into the original by hand, then delete it"
            )
        case .editorBackup:
            return (.editorFile, .warning, "an editor's backup or swap file: Folio does not read it; delete it when the editor is closed")
        case .temporary:
            return (
                .tempFile, .warning,
                "a temporary or hidden file (rsync's `.name.XXXXXX` while a transfer runs, or one cut short): Folio does not read it; delete it if no transfer is running"
            )
        case .unrecognized:
            return (
                .strayFile, .warning, "not part of the Folio format: Folio ignores it (move it out of the store, or fix its name if it was meant to be data)"
            )
        }
    }
}

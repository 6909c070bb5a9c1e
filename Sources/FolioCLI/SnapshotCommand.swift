import Folio
import Foundation

/// `folio snapshot DIR DEST`
enum SnapshotCommand {
    static func run(_ raw: [String]) async throws -> Int32 {
        let arguments = try Arguments(raw, flags: [])
        let positionals = try arguments.positionals(min: 2, max: 2)
        let destination = CommandLineTool.folder(positionals[1])
        let store = try await CommandLineTool.openToCopy(CommandLineTool.folder(positionals[0]))
        let report = try await ProgressLine.during("snapshot") { progress in
            try await withClosing(store) { store in try await store.snapshot(to: destination, progress: progress) }.get()
        }
        Output.line("snapshot in \(destination.path): \(report.linked) files linked, \(report.copied) copied")
        return CommandLineTool.success
    }
}

import Folio
import Foundation

/// `folio backup DIR DEST`
enum BackupCommand {
    static func run(_ raw: [String]) async throws -> Int32 {
        let arguments = try Arguments(raw, flags: [])
        let positionals = try arguments.positionals(min: 2, max: 2)
        let destination = CommandLineTool.folder(positionals[1])
        let store = try await CommandLineTool.openToCopy(CommandLineTool.folder(positionals[0]))
        try await ProgressLine.during("backup") { progress in
            try await withClosing(store) { store in try await store.backup(to: destination, progress: progress) }.get()
        }
        let report = try await ProgressLine.during("backup") { progress in try await Store.verify(at: destination, progress: progress) }
        for problem in report.problems where problem.severity == .error { Output.line(problem.description) }
        guard report.isHealthy else {
            Output.error("folio backup: the copy in \(destination.path) does not verify")
            return CommandLineTool.problemsFound
        }
        Output.line("copied to \(destination.path): " + VerifyCommand.summary(report))
        return CommandLineTool.success
    }
}

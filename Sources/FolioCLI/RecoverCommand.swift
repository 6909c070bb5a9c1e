import Folio
import Foundation

/// `folio recover [--json] [DIR]`
enum RecoverCommand {
    static func run(_ raw: [String]) async throws -> Int32 {
        let arguments = try Arguments(raw, flags: ["json"])
        let folder = CommandLineTool.folder(try arguments.positionals(min: 0, max: 1).first)
        try CommandLineTool.requireStore(folder)
        let report = try await ProgressLine.during("recover") { progress in try await Store.recover(at: folder, progress: progress) }
        if arguments.flags.contains("json") {
            try Output.json([
                "actions": report.actions.map { ["kind": $0.kind.rawValue, "path": $0.path, "message": $0.message] },
                "healthy": report.remaining.isHealthy,
                "problems": report.remaining.problems.map(VerifyCommand.problemJSON),
            ])
        } else {
            if report.actions.isEmpty { Output.line("nothing to recover") }
            for action in report.actions { Output.line(action.description) }
            let remaining = report.remaining.problems.filter { $0.severity != .note }
            if !remaining.isEmpty { Output.line("still to look at:") }
            for problem in remaining { Output.line(problem.description) }
            Output.line("verify: " + VerifyCommand.summary(report.remaining))
        }
        return report.remaining.isHealthy ? CommandLineTool.success : CommandLineTool.problemsFound
    }
}

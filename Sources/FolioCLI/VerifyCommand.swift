import Folio
import Foundation

/// `folio verify [--json] [--strict] [DIR]`
enum VerifyCommand {
    static func run(_ raw: [String]) async throws -> Int32 {
        let arguments = try Arguments(raw, flags: ["json", "strict"])
        let folder = CommandLineTool.folder(try arguments.positionals(min: 0, max: 1).first)
        let report = try await ProgressLine.during("verify") { progress in try await Store.verify(at: folder, progress: progress) }
        let failed = !report.isHealthy || (arguments.flags.contains("strict") && !report.warnings.isEmpty)
        if arguments.flags.contains("json") {
            try Output.json([
                "healthy": report.isHealthy,
                "filesChecked": report.filesChecked,
                "entitiesChecked": report.entitiesChecked,
                "problems": report.problems.map(problemJSON),
            ])
        } else {
            for problem in report.problems { Output.line(problem.description) }
            Output.line(summary(report))
        }
        return failed ? CommandLineTool.problemsFound : CommandLineTool.success
    }

    static func summary(_ report: VerificationReport) -> String {
        func count(_ n: Int, _ word: String) -> String { "\(n) \(word)\(n == 1 ? "" : "s")" }
        return
            "checked \(count(report.filesChecked, "file")), \(count(report.entitiesChecked, "entity").replacingOccurrences(of: "entitys", with: "entities")): "
            + "\(count(report.errors.count, "error")), \(count(report.warnings.count, "warning")), \(count(report.notes.count, "note"))"
    }

    static func problemJSON(_ problem: StoreProblem) -> [String: Any] {
        [
            "severity": problem.severity.rawValue,
            "kind": problem.kind.rawValue,
            "path": problem.path,
            "line": jsonValue(problem.line),
            "column": jsonValue(problem.column),
            "message": problem.message,
        ]
    }
}

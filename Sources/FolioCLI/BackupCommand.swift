import Folio
import Foundation

/// `folio backup DIR DEST`
enum BackupCommand {
    static func run(_ raw: [String]) async throws -> Int32 {
        let arguments = try Arguments(raw, flags: [])
        let positionals = try arguments.positionals(min: 2, max: 2)
        let source = CommandLineTool.folder(positionals[0])
        let destination = CommandLineTool.folder(positionals[1])
        try CommandLineTool.requireStore(source)
        // A backup never writes to the store it copies (and works on a read-only mount).
        var configuration = Store.Configuration()
        configuration.readOnly = true
        let store = try await Store.open(at: source, configuration: configuration)
        try await withClosing(store) { store in try await store.backup(to: destination) }.get()
        let report = try await Store.verify(at: destination)
        for problem in report.problems where problem.severity == .error { Output.line(problem.description) }
        guard report.isHealthy else {
            Output.error("folio backup: the copy in \(destination.path) does not verify")
            return CommandLineTool.problemsFound
        }
        Output.line("copied to \(destination.path): " + VerifyCommand.summary(report))
        return CommandLineTool.success
    }
}

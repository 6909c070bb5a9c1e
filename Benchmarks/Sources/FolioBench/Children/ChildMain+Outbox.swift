import Foundation

/// The child commands of the outbox group (Runner+Outbox.swift), in a fresh process each:
///
///     __child outbox-status folio|grdb PATH ID                 the first sync status of the todo ID (open
///                                                              not timed; one pending command), prints "nanoseconds"
///     __child outbox-commit folio|grdb PATH EDIT-JSON PENDING  open + one durable commit of the edit
///                                                              (an OutboxEdit as JSON); the outbox must then
///                                                              hold PENDING commands; prints "nanoseconds"
extension ChildMain {
    /// Runs `command` if it is one of the outbox group's; returns its output line, or nil for another command.
    static func outbox(_ command: String, engine: String, path: String, _ rest: [String]) async throws -> String? {
        let folio = engine == "folio"
        guard folio || engine == "grdb" else { throw BenchError("unknown engine \(engine)") }
        let folder = URL(fileURLWithPath: path, isDirectory: true)
        switch command {
        case "outbox-status":
            guard rest.count == 1 else { throw BenchError("outbox-status: bad arguments") }
            let elapsed = folio ? try await FolioContender.firstSyncStatus(folder, id: rest[0]) : try GRDBContender.firstSyncStatus(path, id: rest[0])
            return "\(elapsed.nanoseconds)"
        case "outbox-commit":
            guard rest.count == 2, let pending = Int(rest[1]) else { throw BenchError("outbox-commit: bad arguments") }
            let edit = try JSONDecoder().decode(OutboxEdit.self, from: Data(rest[0].utf8))
            let elapsed =
                folio
                ? try await FolioContender.openAndCommit(folder, edit, pendingAfter: pending)
                : try GRDBContender.openAndCommit(path, edit, pendingAfter: pending)
            return "\(elapsed.nanoseconds)"
        default:
            return nil
        }
    }
}

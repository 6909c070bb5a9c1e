import Folio
import Foundation

/// Dispatches a command line to its subcommand and turns the outcome into an exit code.
enum CommandLineTool {
    static let success: Int32 = 0
    static let problemsFound: Int32 = 1
    static let usage: Int32 = 2

    static func run(_ arguments: [String]) async -> Int32 {
        guard let name = arguments.first else {
            Output.error(Help.tool)
            return usage
        }
        let rest = Array(arguments.dropFirst())
        let help: String
        let command: ([String]) async throws -> Int32
        switch name {
        case "-h", "--help", "help":
            Output.line(Help.tool)
            return success
        case "status": (help, command) = (Help.status, StatusCommand.run)
        case "verify": (help, command) = (Help.verify, VerifyCommand.run)
        case "recover": (help, command) = (Help.recover, RecoverCommand.run)
        case "outbox": (help, command) = (Help.outbox, OutboxCommands.run)
        case "drain": (help, command) = (Help.drain, DrainCommand.run)
        case "backup": (help, command) = (Help.backup, BackupCommand.run)
        case "snapshot": (help, command) = (Help.snapshot, SnapshotCommand.run)
        case "migrate": (help, command) = (Help.migrate, MigrateCommand.run)
        case "merge-driver": (help, command) = (Help.mergeDriver, GitCommands.mergeDriver)
        case "resolve": (help, command) = (Help.resolve, GitCommands.resolve)
        case "restore": (help, command) = (Help.restore, RestoreCommand.run)
        default:
            Output.error("folio: unknown command '\(name)'\n\n" + Help.tool)
            return usage
        }
        if rest.contains("--help") || rest.contains("-h") {
            Output.line(help)
            return success
        }
        do {
            return try await command(rest)
        } catch let error as UsageError {
            Output.error("folio \(name): \(error.message)\n\n" + help)
            return usage
        } catch {
            Output.error("folio \(name): error: \(error)")
            return problemsFound
        }
    }

    /// The store folder: DIR, or the current directory.
    static func folder(_ path: String?) -> URL {
        URL(fileURLWithPath: path ?? FileManager.default.currentDirectoryPath).standardizedFileURL
    }

    /// Fails unless `folder` holds `folio.json`, so a command that opens a store never creates one.
    static func requireStore(_ folder: URL) throws {
        guard FileManager.default.fileExists(atPath: folder.appendingPathComponent("folio.json").path) else {
            throw ToolError("\(folder.path) is not a Folio store (there is no folio.json)")
        }
    }

    /// A command number: a positive integer, with or without its leading zeros.
    static func sequence(_ text: String) throws(UsageError) -> UInt64 {
        guard let value = UInt64(text.hasSuffix(".json") ? String(text.dropLast(5)) : text), value > 0 else {
            throw UsageError("'\(text)' is not a command number")
        }
        return value
    }
}

extension CommandLineTool {
    /// Opens a store to copy it (`backup`, `snapshot`): read-only, so the copy never writes to the
    /// store it copies (no recovery, no checkpoint) and works on a read-only mount; the shared lock
    /// alone keeps writers out.
    static func openToCopy(_ source: URL) async throws -> Store {
        try requireStore(source)
        var configuration = Store.Configuration()
        configuration.readOnly = true
        return try await Store.open(at: source, configuration: configuration)
    }
}

/// A failure the tool reports as is (exit code 1).
struct ToolError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

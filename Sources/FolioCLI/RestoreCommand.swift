import Folio
import Foundation

/// `folio restore --list FILE [DIR]`, `folio restore FILE VERSION [DIR]`
enum RestoreCommand {
    static func run(_ raw: [String]) async throws -> Int32 {
        let arguments = try Arguments(raw, flags: ["list"])
        let list = arguments.flags.contains("list")
        let positionals = try arguments.positionals(min: list ? 1 : 2, max: list ? 2 : 3)
        let folder = CommandLineTool.folder(positionals.count > (list ? 1 : 2) ? positionals.last : nil)
        try CommandLineTool.requireStore(folder)
        let path = relative(positionals[0], to: folder)
        let store = try await Store.open(at: folder)
        return try await withClosing(store) { store in
            if list {
                let versions = try await store.history(of: path)
                if versions.isEmpty { Output.line("Folio keeps no version of \(path)") }
                for version in versions {
                    let kind = version.isSave ? "  (a save someone made)" : ""
                    Output.line("\(Output.timestamp(version.date))  \(version.entityCount) entities  \(version.name)\(kind)")
                }
                return CommandLineTool.success
            }
            try await store.restore(path, to: positionals[1])
            Output.line(
                "restored \(path) to \(positionals[1]): the app adopts it as an edit (the entities it lacks are deleted, and sent as deletes for a collection that pushes)"
            )
            return CommandLineTool.success
        }.get()
    }

    /// FILE as given (relative to the current directory, or absolute) inside the store, or as a
    /// path relative to the store.
    private static func relative(_ file: String, to folder: URL) -> String {
        let absolute = URL(fileURLWithPath: file).standardizedFileURL.path
        let root = folder.path.hasSuffix("/") ? folder.path : folder.path + "/"
        if absolute.hasPrefix(root), FileManager.default.fileExists(atPath: absolute) { return String(absolute.dropFirst(root.count)) }
        return file
    }
}

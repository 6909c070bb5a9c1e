import Folio
import Foundation

/// `folio merge-driver setup [DIR]`, `folio merge-driver BASE OURS THEIRS [PATH]` (git runs this
/// one) and `folio resolve FILE...`: data files merged per entity by git (FORMAT.md, "Git").
enum GitCommands {
    static func mergeDriver(_ raw: [String]) async throws -> Int32 {
        let arguments = try Arguments(raw, flags: [])
        if arguments.positional.first == "setup" {
            let positionals = try arguments.positionals(min: 1, max: 2)
            return try setup(CommandLineTool.folder(positionals.count > 1 ? positionals[1] : nil))
        }
        let positionals = try arguments.positionals(min: 3, max: 4)
        let path = positionals.count > 3 ? positionals[3] : positionals[1]
        let read = { (file: String) throws -> [UInt8] in [UInt8](try Data(contentsOf: URL(fileURLWithPath: file))) }
        do {
            let merged = try DataFileMerge.merge(base: try read(positionals[0]), ours: try read(positionals[1]), theirs: try read(positionals[2]), path: path)
            try write(merged.bytes, to: positionals[1])
            if !merged.conflicts.isEmpty {
                Output.error(
                    "folio: \(path): \(merged.conflicts.count) entities changed on both sides, merged field by field with the incoming side's values first: \(merged.conflicts.prefix(10).joined(separator: ", "))"
                )
            }
            return CommandLineTool.success
        } catch let error as FolioError {
            // git keeps the conflict for a person (with our side in the file).
            Output.error("folio merge-driver: \(error.description)")
            return CommandLineTool.problemsFound
        }
    }

    static func resolve(_ raw: [String]) async throws -> Int32 {
        let arguments = try Arguments(raw, flags: [])
        let files = try arguments.positionals(min: 1, max: Int.max)
        var failed = false
        for file in files {
            do {
                let merged: DataFileMerge.Result
                if let stages = conflictStages(of: file) {
                    // The exact versions git keeps for a conflict: no line-level mix of the two.
                    merged = try DataFileMerge.merge(base: stages.base, ours: stages.ours, theirs: stages.theirs, path: file)
                } else {
                    merged = try DataFileMerge.resolve([UInt8](try Data(contentsOf: URL(fileURLWithPath: file))), path: file)
                }
                try write(merged.bytes, to: file)
                var line = "resolved \(file)"
                line += merged.hadBase ? " against the merge base" : " from its conflict markers, without a merge base (nothing either side lacks is deleted)"
                if !merged.conflicts.isEmpty {
                    line +=
                        "; changed on both sides, merged field by field with the incoming side first: \(merged.conflicts.prefix(10).joined(separator: ", "))"
                }
                Output.line(line)
            } catch let error as FolioError {
                Output.error("folio resolve: \(error.description)")
                failed = true
            }
        }
        return failed ? CommandLineTool.problemsFound : CommandLineTool.success
    }

    /// The versions git's index holds for a file in conflict (stage 1, the merge base; 2, ours;
    /// 3, theirs; an absent stage is an absent file), or nil when the file is not in a git
    /// conflict (or git is not installed).
    private static func conflictStages(of file: String) -> (base: [UInt8], ours: [UInt8], theirs: [UInt8])? {
        let url = URL(fileURLWithPath: file).standardizedFileURL
        let folder = url.deletingLastPathComponent()
        guard let bytes = try? output(["ls-files", "-u", "--", url.lastPathComponent], in: folder), !bytes.isEmpty else { return nil }
        let listed = String(decoding: bytes, as: UTF8.self)
        let stages = Set(listed.split(separator: "\n").compactMap { $0.split(separator: "\t").first?.split(separator: " ").last })
        guard stages.contains("2"), stages.contains("3") else { return nil }
        func stage(_ number: String) -> [UInt8] {
            guard stages.contains(Substring(number)) else { return [] }
            return (try? output(["show", ":\(number):./\(url.lastPathComponent)"], in: folder)) ?? []
        }
        return (stage("1"), stage("2"), stage("3"))
    }

    private static func output(_ arguments: [String], in folder: URL) throws -> [UInt8] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["git", "-C", folder.path] + arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw ToolError("git \(arguments.joined(separator: " ")) failed") }
        return [UInt8](data)
    }

    /// Sets up the merge driver in the repository that holds `folder`: the repository's config
    /// names this executable, `.gitattributes` in the store's folder routes the data files to it.
    private static func setup(_ folder: URL) throws -> Int32 {
        try CommandLineTool.requireStore(folder)
        let executable = URL(fileURLWithPath: Bundle.main.executablePath ?? CommandLine.arguments[0]).standardizedFileURL.path
        let quoted = "'" + executable.replacingOccurrences(of: "'", with: "'\\''") + "'"
        try git(["config", "merge.folio.name", "Folio data files, merged per entity"], in: folder)
        try git(["config", "merge.folio.driver", "\(quoted) merge-driver %O %A %B %P"], in: folder)
        let attributes = folder.appendingPathComponent(".gitattributes")
        var text = (try? String(contentsOf: attributes, encoding: .utf8)) ?? ""
        if !text.contains("merge=folio") {
            if !text.isEmpty && !text.hasSuffix("\n") { text += "\n" }
            text += """
                # Folio's data files merge per entity (folio merge-driver setup; FORMAT.md, "Git").
                *.json merge=folio
                /folio.json !merge
                /outbox/** !merge

                """
            try Data(text.utf8).write(to: attributes, options: .atomic)
        }
        Output.line("git merges the data files of \(folder.path) per entity with \(executable); commit .gitattributes")
        return CommandLineTool.success
    }

    private static func git(_ arguments: [String], in folder: URL) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["git", "-C", folder.path] + arguments
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw ToolError("git \(arguments.joined(separator: " ")) failed in \(folder.path) (is it inside a git repository?)")
        }
    }

    /// Replaces a file by a temp file beside it and a rename: never half a file.
    private static func write(_ bytes: [UInt8], to path: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path), options: .atomic)
    }
}

// todo: the TyTE todo app of SEEDS.md as a command-line app on Folio.
//
//   todo tag add errands --color '#FF8800'
//   todo add "Buy milk" --tag errands       works offline: the change waits in the outbox
//   todo list                               today's todos, with their sync state
//   todo sync --server http://127.0.0.1:8080/api/
//
// `todo --help` lists every command. Each run opens the store, runs one command, and closes the
// store (which brings the JSON files up to date), so the folder can be read in an editor.
import Folio
import Foundation

/// Takes `--data DIR` out of the words; else `$TODO_DATA`; else `./TodoAppData`.
func dataFolder(_ words: inout [String]) throws(UsageError) -> URL {
    var path = ProcessInfo.processInfo.environment["TODO_DATA"] ?? "TodoAppData"
    var index = 0
    while index < words.count, words[index] != "--" {
        if words[index] == "--data" {
            guard index + 1 < words.count else { throw UsageError("--data needs a folder") }
            path = words[index + 1]
            words.removeSubrange(index...index + 1)
        } else if words[index].hasPrefix("--data=") {
            path = String(words[index].dropFirst("--data=".count))
            words.remove(at: index)
        } else {
            index += 1
        }
    }
    guard !path.isEmpty else { throw UsageError("--data needs a folder") }
    return URL(fileURLWithPath: path)
}

func printError(_ text: String) {
    FileHandle.standardError.write(Data("todo: \(text)\n".utf8))
}

var words = Array(CommandLine.arguments.dropFirst())
var command: Command?
do {
    let folder = try dataFolder(&words)
    if words.first == "help" || words.first == "--help" || words.first == "-h" {
        if let (asked, _) = Command.find(Array(words.dropFirst())) { print(asked.help) } else { print(Command.overview) }
        exit(0)
    }
    guard let (found, rest) = Command.find(words) else {
        throw UsageError(words.isEmpty ? "which command?" : "unknown command \"\(words.prefix(2).joined(separator: " "))\"")
    }
    command = found
    let arguments = try Arguments(rest, options: found.options, flags: found.flags.union(["help"]))
    if arguments.has("help") {
        print(found.help)
        exit(0)
    }
    if found.name == "sync", let code = IsolatedSync.runInChildProcess(report: { printError($0) }) {
        // Linux: the sync ran in a child process, restarted if a cut connection crashed URLSession.
        exit(code)
    }
    var configuration = Store.Configuration()
    // A todo file edited by hand (FORMAT.md, "Editing by hand") is adopted by the first command
    // that reads it; its days' stats are recomputed in the same transaction.
    configuration.onOutsideEdit = { edits, transaction in
        try transaction.refreshStats(of: edits.filter { $0.collection == Todo.collection }.flatMap(\.partitions))
    }
    // Folio's log (merges of hand edits, files it could not read) on standard error with
    // TODO_LOG=1, or appended to the file TODO_LOG names.
    if let target = ProcessInfo.processInfo.environment["TODO_LOG"], !target.isEmpty {
        configuration.logHandler = { message in
            let line = "\(ProcessInfo.processInfo.processIdentifier) \(message)\n"
            if target == "1" {
                FileHandle.standardError.write(Data(line.utf8))
            } else if let handle = FileHandle(forWritingAtPath: target)
                ?? (FileManager.default.createFile(atPath: target, contents: nil) ? FileHandle(forWritingAtPath: target) : nil)
            {
                handle.seekToEndOfFile()
                handle.write(Data(line.utf8))
                try? handle.close()
            }
        }
    }
    let store = try await Store.open(at: folder, configuration: configuration)
    let outcome: Result<Void, any Error>
    do { outcome = .success(try await found.run(arguments, store)) } catch { outcome = .failure(error) }
    try await store.close()   // even after a failure: brings the files up to date
    try outcome.get()
    exit(0)
} catch let error as UsageError {
    printError("\(error)\n" + (command.map { "usage: \($0.usage)" } ?? "`todo --help` lists the commands"))
    exit(2)
} catch {
    printError("\(error)")
    exit(1)
}

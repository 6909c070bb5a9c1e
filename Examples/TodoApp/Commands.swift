import Folio
import Foundation

/// One `todo` command: its name, its help, the options it accepts, and what it runs.
struct Command: Sendable {
    var name: String
    var usage: String
    var summary: String
    var details = ""
    var options: Set<String> = []
    var flags: Set<String> = []
    var run: @Sendable (Arguments, Store) async throws -> Void

    var help: String {
        "usage: \(usage)\n\n\(summary)\n" + (details.isEmpty ? "" : "\n\(details)\n")
            + "\nThe data folder is --data DIR, else $TODO_DATA, else ./TodoAppData."
    }
}

extension Command {
    static let all: [Command] = [
        Command(
            name: "add", usage: "todo add TITLE [--date DAY] [--tag NAME] [--priority 0-3]",
            summary: "Adds a todo (default: today).",
            details: "DAY is YYYY-MM-DD, today, tomorrow or yesterday. Works offline: the change waits in the outbox\nfor `todo sync`.",
            options: ["date", "tag", "priority"], run: TodoCommands.add),
        Command(
            name: "list", usage: "todo list [DAY]",
            summary: "Lists a day's todos (default: today).",
            details: "Todos the server has not acknowledged yet are marked (pending); those it refused, (failed to sync).",
            run: TodoCommands.list),
        Command(
            name: "done", usage: "todo done ID",
            summary: "Marks a todo done, or not done if it was.",
            details: "ID is the todo's id or any unambiguous start of it, as `todo list` shows it.",
            run: TodoCommands.toggle),
        Command(
            name: "edit", usage: "todo edit ID [--title TITLE] [--priority 0-3] [--tag NAME | --no-tag]",
            summary: "Changes a todo's title, priority or tag.",
            options: ["title", "priority", "tag"], flags: ["no-tag"], run: TodoCommands.edit),
        Command(
            name: "move", usage: "todo move ID DAY",
            summary: "Moves a todo to another day.", run: TodoCommands.move),
        Command(
            name: "delete", usage: "todo delete ID",
            summary: "Deletes a todo.", run: TodoCommands.delete),
        Command(
            name: "tags", usage: "todo tags",
            summary: "Lists the tags.", run: TagCommands.list),
        Command(
            name: "tag add", usage: "todo tag add NAME [--color #RRGGBB]",
            summary: "Creates a tag (default color #808080).", options: ["color"], run: TagCommands.add),
        Command(
            name: "tag rename", usage: "todo tag rename NAME NEW-NAME",
            summary: "Renames a tag.", run: TagCommands.rename),
        Command(
            name: "tag delete", usage: "todo tag delete NAME",
            summary: "Deletes a tag; its todos stay, untagged.", run: TagCommands.delete),
        Command(
            name: "stats", usage: "todo stats [YYYY-MM]",
            summary: "Shows a month's daily stats (default: this month).",
            details: "Todos done per day and per tag: computed here with every change, replaced by the server's at every sync.",
            run: StatsCommand.run),
        Command(
            name: "sync", usage: "todo sync --server URL [--token TOKEN] [--attempts N]",
            summary: "Sends the waiting changes to the server, then pulls its state.",
            details: """
                Sends the outbox in order, then pulls tags, todos and daily stats.
                URL is the server's base URL (PROTOCOL.md), also $TODO_SERVER; TOKEN (also $TODO_TOKEN) is sent
                as `Authorization: Bearer TOKEN`. When the server answers with
                a retryable error, sync waits and tries again, N times in all (default 3). Safe to interrupt
                at any moment and run again: each change is applied by the server exactly once.
                Exit status 1 if changes still wait, or if the server refused some in this run.
                """,
            options: ["server", "token", "attempts"], run: SyncCommand.run),
        Command(
            name: "export", usage: "todo export [--json]",
            summary: "Prints every todo and tag as JSON.",
            details: "{\"tags\": [...], \"todos\": [...]}, each list sorted by id, each entity as stored: the same data\nalways gives the same bytes.",
            flags: ["json"], run: ExportCommand.run),
    ]

    /// The command `words` start with, and the words after its name.
    static func find(_ words: [String]) -> (Command, [String])? {
        for command in all {
            let name = command.name.split(separator: " ").map(String.init)
            if words.starts(with: name) { return (command, Array(words.dropFirst(name.count))) }
        }
        return nil
    }

    /// The help of every command.
    static var overview: String {
        let width = all.map(\.usage.count).max() ?? 0
        let lines = all.map { $0.usage.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + $0.summary }
        return """
            todo: the TyTE todo app on Folio. Works offline; `todo sync` sends the changes to a server.

            \(lines.joined(separator: "\n"))

            Every command takes --data DIR (default: $TODO_DATA, else ./TodoAppData) and --help.
            Exit status: 0 ok, 1 failure, 2 usage error.

            """
    }
}

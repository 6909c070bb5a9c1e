// The README's example: declare entities, open a store, write, read.
// Run it with `swift run quickstart [folder]` (default: ./TodoData), then look at the folder.
// Laid out as the README shows it, comments aligned: the formatter leaves it as written.
// swift-format-ignore-file
import Folio
import Foundation

struct Todo: Entity {
    static let collection = "todos"
    static let partitioning = Partitioning<Todo>.day(\.date)   // todos/2026-11/2026-11-22.json

    var id = UUID()                                            // made on the device: works offline
    var title: String
    var date: String                                           // "YYYY-MM-DD"
    var done = false
}

let folder = URL(fileURLWithPath: CommandLine.arguments.dropFirst().first ?? "TodoData")
let store = try await Store.open(at: folder)

try await store.write { tx in                                  // all or nothing, durable on return
    try tx.upsert(Todo(title: "Buy milk", date: "2026-11-22"))
    try tx.upsert(Todo(title: "Call mom", date: "2026-11-22", done: true))
}

let open = try await store.fetch(Query<Todo>(.day("2026-11-22"), where: #Predicate { !$0.done },
                                             sortedBy: [SortDescriptor(\.title)]))
for todo in open { print("[ ] \(todo.title)") }
try await store.close()                                        // files are now up to date
print("Stored in \(folder.path)/todos/2026-11/2026-11-22.json")

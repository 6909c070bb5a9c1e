import Folio
import FolioCrashSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `append DIR COUNT [--until-file PATH] [--max-seconds 60]`: the writer of the editor race
/// (EditorRaceTests). Writes slots `W-0`, `W-1`, … into one day file (`2026-01-25`), each in its
/// own durable write followed by a checkpoint, and prints `ack W-n` after each: it replaces the
/// day file as often as it can, as short-lived processes such as `todo add` do at every close.
/// Stops after COUNT slots, when PATH exists, or when its parent is gone. Folio's log goes to the
/// output as `log <monotonic ns> <level> <path>: <text>`.
func append(_ arguments: Arguments) async throws {
    let values = arguments.positional
    guard values.count == 3, let count = Int(values[2]) else { fail("usage: append DIR COUNT [--until-file PATH]") }
    let stopFile = arguments.options["until-file"]
    let parent = getppid()
    let deadline = ContinuousClock.now + .seconds(arguments.int("max-seconds", default: 60))
    var configuration = Store.Configuration()
    configuration.logHandler = { message in say("log \(DispatchTime.now().uptimeNanoseconds) \(message.level) \(message.path ?? "-"): \(message.text)") }
    let store = try await Store.open(at: URL(fileURLWithPath: values[1]), configuration: configuration)
    for n in 0..<count {
        guard getppid() == parent, ContinuousClock.now < deadline else { break }
        if let stopFile, FileManager.default.fileExists(atPath: stopFile) { break }
        let slot = Slot(id: "W-\(n)", day: "2026-01-25", transaction: n, group: [], writer: "W")
        try await store.write { tx in try tx.upsert(slot) }
        say("ack \(slot.id)")
        do {
            try await store.checkpoint()
        } catch let error as FolioError {
            // The file is half-saved by an editor at this instant, or an editor keeps saving it
            // faster than Folio can swap it: the slot waits in the journal.
            say("blocked \(error.message)")
        }
    }
    try await store.close()
    say("done")
}

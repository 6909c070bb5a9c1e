import Folio
import FolioCrashSupport
import Foundation

/// `folio-crash-child dump DIR DAY[,DAY…]`: opens the store at DIR (as an app would, read-write)
/// and prints what each day holds, for the fuzz test, which runs it on damaged folders and must
/// see a crash or a hang as such. Lines: `refused ERROR`, or for each day `slot DAY ID TRANSACTION`
/// lines then `day DAY ok`, or `day DAY unreadable ERROR`; finally `done`.
func dumpStore(_ arguments: Arguments) async throws {
    guard arguments.positional.count >= 3 else { fail("usage: folio-crash-child dump DIR DAY[,DAY…]") }
    let url = URL(fileURLWithPath: arguments.positional[1])
    let store: Store
    do {
        store = try await Store.open(at: url)
    } catch {
        say("refused \(error)")
        return
    }
    for day in arguments.positional[2].split(separator: ",").map(String.init) {
        do {
            for slot in try await store.fetch(Query<Slot>(.day(day))) { say("slot \(day) \(slot.id) \(slot.transaction)") }
            say("day \(day) ok")
        } catch {
            say("day \(day) unreadable \(error)")
        }
    }
    do { try await store.close() } catch { say("close \(error)") }
    say("done")
}

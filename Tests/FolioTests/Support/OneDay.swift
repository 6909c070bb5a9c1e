@testable import Folio
import FolioCrashSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One day file of slots, and a person's edits of it: what StaleSaveTests and CopiedVersionsTests
/// share.
enum OneDay {
    static let path = "slots/2026-01/2026-01-25.json"

    static func slot(_ id: String, _ transaction: Int = 0) -> Slot {
        Slot(id: id, day: "2026-01-25", transaction: transaction, group: [], writer: "W")
    }

    /// The ids of every slot the store serves, sorted.
    static func ids(_ store: Store) async throws -> [String] {
        try await store.fetch(Query<Slot>(.all)).map(\.id).sorted()
    }

    /// `text` (a version of the day file) with one more entity, typed as a person does.
    static func adding(_ id: String, to text: String) -> String {
        text.replacingOccurrences(of: "\"entities\": {", with: "\"entities\": {" + EditorRaceTests.entity(id) + ",")
    }

    /// Saves `text` over the day by rename, as sed -i, rsync and most editors do.
    static func saveByRename(_ text: String, in folder: TemporaryFolder) throws {
        let temp = "slots/2026-01/.2026-01-25.json.edit"
        try folder.write(text, to: temp)
        try #require(rename(folder.file(temp).path, folder.file(path).path) == 0)
    }
}

@testable import Folio
import Foundation
import Testing

/// What a writer accepts, every reader reads back: the entity depth limit holds on every path
/// (write, file, journal, command, server answer), and a transaction over the journal's record
/// limit is refused before anything is written.
@Suite struct LimitsTests {
    /// A tag whose `color` is replaced by JSON nested `depth` levels deep in the entity.
    static func nestedJSON(depth: Int) -> String {
        // The entity object is level 1; `color` adds `depth - 1` arrays.
        String(repeating: "[", count: depth - 1) + "1" + String(repeating: "]", count: depth - 1)
    }

    struct Deep: Entity, Equatable {
        static let collection = "deep"
        static let partitioning = Partitioning<Deep>.none
        static let syncMode = SyncMode.push
        var id: String
        var value: Nested
    }

    indirect enum Nested: Codable, Equatable, Sendable {
        case leaf
        case list([Nested])
        init(depth: Int) { self = depth <= 0 ? .leaf : .list([Nested(depth: depth - 1)]) }
        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if container.decodeNil() { self = .leaf } else { self = .list(try container.decode([Nested].self)) }
        }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .leaf: try container.encodeNil()
            case .list(let items): try container.encode(items)
            }
        }
    }

    /// An entity at the limit is written, committed with its command, survives a crash before
    /// the checkpoint (the journal replays) and reads back; one level more is refused at the write.
    @Test func anEntityAtTheDepthLimitRoundTripsThroughTheJournal() async throws {
        let folder = TemporaryFolder()
        let atLimit = Deep(id: "deep", value: Nested(depth: Limits.entityDepth - 1))
        #expect(try EntityCoder().encode(atLimit).depth == Limits.entityDepth)
        let store = try await Store.open(at: folder.url, configuration: .testing())
        try await store.write { tx in try tx.upsert(atLimit) }
        let error = await expectFolioError(.encodingFailed) {
            try await store.write { tx in try tx.upsert(Deep(id: "deeper", value: Nested(depth: Limits.entityDepth))) }
        }
        #expect(error?.message.contains("limit is \(Limits.entityDepth)") == true, "\(String(describing: error))")
        // A crash now: the journal holds the record (no checkpoint ran). Copy the folder as is.
        let copy = TemporaryFolder()
        try FileManager.default.copyItem(at: folder.url, to: copy.url)
        try await store.close()

        let reopened = try await Store.open(at: copy.url, configuration: .testing())
        #expect(try await reopened.get(Deep.self, id: "deep") == atLimit)
        #expect(try await reopened.pendingCommands().count == 1)
        try await reopened.close()
        #expect(try await Store.verify(at: copy.url).isHealthy)
    }

    /// A hand-written file with an entity deeper than the limit (but within the parser's): the
    /// entity is reported with its line, and nothing deeper ever reaches the journal.
    @Test func aTooDeepEntityInAFileIsReportedWhereItIs() async throws {
        let folder = TemporaryFolder()
        let store = try await Store.open(at: folder.url, configuration: .testing())
        try await store.write { tx in try tx.upsert(Deep(id: "ok", value: .leaf)) }
        try await store.close()
        let deep = String(repeating: "[", count: Limits.entityDepth) + String(repeating: "]", count: Limits.entityDepth)
        try folder.write("{\n  \"entities\": {\n    \"x\": {\"id\": \"x\", \"value\": \(deep)}\n  }\n}\n", to: "deep.json")
        let reader = try await Store.open(at: folder.url, configuration: .testing())
        let error = await expectFolioError(.corruptFile) { try await reader.fetch(Query<Deep>()) }
        #expect(error?.line == 3 && error?.message.contains("levels deep") == true, "\(String(describing: error))")
        try await reader.close()
        let report = try await Store.verify(at: folder.url)
        #expect(report.errors.contains { $0.path == "deep.json" && $0.line == 3 }, "\(report.problems.map(\.description))")
    }

    /// The writer enforces the journal reader's record limit, with the same constant.
    @Test func aTransactionOverTheRecordLimitIsRefusedBeforeItIsWritten() throws {
        #expect(Limits.transactionBytes == Journal.maximumPayload)
        #expect(throws: Never.self) { try Limits.checkTransaction(payloadBytes: Journal.maximumPayload) }
        do {
            try Limits.checkTransaction(payloadBytes: Journal.maximumPayload + 1)
            Issue.record("a record the reader would drop was accepted")
        } catch {
            #expect(error.code == .limitExceeded && error.message.contains("256 MiB"))
        }
        // The reader indeed stops at such a record (it reads as incomplete, never as committed).
        var bytes: [UInt8] = []
        bytes.appendLittleEndian(UInt32(Journal.maximumPayload + 1))
        bytes += [UInt8](repeating: 0, count: 12)
        let read = try Journal.parseRecords(bytes, baseOffset: 40, generation: 1, expectedTransaction: 1)
        #expect(read.records.isEmpty && read.damage == nil)
    }
}

@testable import Folio
import FolioCrashSupport
import Foundation
import Testing

/// A journal record's payload is written straight into bytes (JournalRecord.payload): it must be
/// exactly the compact canonical JSON of the record (FORMAT.md, "Journal"), as the model below
/// builds it from JSON values, and decode back to the same record, for random records of every
/// kind of change.
@Suite struct JournalRecordTests {
    @Test func thePayloadIsTheRecordsCanonicalJSON() throws {
        let seed = UInt64.random(in: 1...UInt64(UInt32.max))
        var random = SplitMix64(seed: seed)
        for round in 0..<1000 {
            let record = Self.record(&random, transaction: UInt64(round + 1))
            let payload = record.payload()
            #expect(payload == Self.model(record), "round \(round), seed \(seed): \(String(decoding: payload, as: UTF8.self))")
            #expect(try JournalRecord.decode(transaction: record.transaction, payload: payload) == record, "round \(round), seed \(seed)")
        }
        print("journal records: 1000 payloads as their canonical JSON (seed \(seed))")
    }

    /// The record as JSON values, written by JSONWriter: what the payload must be.
    private static func model(_ record: JournalRecord) -> [UInt8] {
        let changes: [JSONValue] = record.changes.map { change in
            var members: [String: JSONValue] = [
                "collection": .string(change.address.collection),
                "granularity": .string(change.address.granularity.rawValue),
                "partition": .string(change.address.key.text),
                "id": .string(change.id),
            ]
            if let entity = change.entity { members["entity"] = entity } else { members["deleted"] = .bool(true) }
            if let version = change.version { members["version"] = .string(version) }
            if change.forgetsVersion { members["version"] = .null }
            return .object(members)
        }
        var members: [String: JSONValue] = ["changes": .array(changes)]
        if !record.outbox.isEmpty {
            members["outbox"] = .array(
                record.outbox.map { change in
                    switch change {
                    case .enqueue(let sequence, let command): return .object(["enqueue": .number(String(sequence)), "command": command])
                    case .remove(let sequence, let archive): return .object(["remove": .number(String(sequence)), "archive": .bool(archive)])
                    case .fail(let sequence, let reason): return .object(["fail": .number(String(sequence)), "reason": reason])
                    case .retry(let sequence): return .object(["retry": .number(String(sequence))])
                    }
                })
        }
        return JSONWriter.compact(.object(members))
    }

    private static func record(_ random: inout SplitMix64, transaction: UInt64) -> JournalRecord {
        func text() -> String { ["a", "tag \"x\"", "café", "line\nbreak", "\u{1F600}"][random.index(5)] }
        let addresses = [
            PartitionAddress(collection: "todos", granularity: .day, key: PartitionKey(text: "2026-11-22")),
            PartitionAddress(collection: "notes", granularity: .month, key: PartitionKey(text: "2026-11")),
            PartitionAddress(collection: "tags", granularity: .none, key: .whole),
        ]
        let changes = (0..<random.index(4)).map { _ -> JournalRecord.Change in
            let entity: JSONValue? =
                random.index(4) == 0 ? nil : .object(["id": .string("e\(random.index(9))"), "title": .string(text()), "n": .number("\(random.index(100))")])
            var change = JournalRecord.Change(address: addresses[random.index(3)], id: "e\(random.index(9))", entity: entity)
            switch random.index(4) {
            case 0: change.version = "v\(random.index(50))"
            case 1: change.forgetsVersion = true
            default: break
            }
            return change
        }
        let outbox = (0..<random.index(3)).map { index -> JournalRecord.OutboxChange in
            let sequence = UInt64(index + 1 + random.index(1000))
            switch random.index(4) {
            case 0: return .enqueue(sequence: sequence, command: .object(["method": .string("PUT"), "body": .object(["title": .string(text())])]))
            case 1: return .remove(sequence: sequence, archive: random.index(2) == 0)
            case 2: return .fail(sequence: sequence, reason: .object(["status": .number("409"), "message": .string(text())]))
            default: return .retry(sequence: sequence)
            }
        }
        return JournalRecord(transaction: transaction, changes: changes, outbox: outbox)
    }
}

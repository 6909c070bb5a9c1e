@testable import Folio
import FolioCrashSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// What every test that kills writing processes checks afterwards (CrashTests, TwoProcessTests,
// LiveCopyTests, OutboxProcessTests). The outbox half of the check (for stores written with
// `--outbox`) is OutboxCheck, in OutboxProcessTests.swift.

/// The checks a store written by children must pass, whatever instant they were killed at.
enum StoreCheck {
    /// Opens the store (so recovery runs), checks every invariant, closes it.
    /// - Parameter acked: For each writer, the highest transaction it acknowledged: the store must
    ///   hold it (or a later one).
    /// - Returns: The violations found (empty if none), and each writer's last transaction.
    static func run(_ folder: URL, acked: [String: Int]) async -> (violations: [String], last: [String: Int]) {
        let store: Store
        do { store = try await Store.open(at: folder) } catch { return (["the store does not open: \(error)"], [:]) }
        var result = await check(store, folder, acked: acked)
        do { try await store.close() } catch { result.violations.append("close failed: \(error)") }
        return result
    }

    private static func check(_ store: Store, _ folder: URL, acked: [String: Int]) async -> (violations: [String], last: [String: Int]) {
        var problems: [String] = []
        let leftovers = (try? FileManager.default.contentsOfDirectory(atPath: folder.path + "/.folio/tmp")) ?? []
        if !leftovers.isEmpty { problems.append(".folio/tmp is not empty after open: \(leftovers.sorted())") }
        // After open, recovery has checkpointed: the files alone hold the whole state.
        let files = parseFiles(folder, problems: &problems)
        let slots: [Slot], pushed: [PushedSlot]
        do {
            slots = try await store.fetch(Query<Slot>(.all))
            pushed = try await store.fetch(Query<PushedSlot>(.all))
        } catch { return (problems + ["fetch failed: \(error)"], [:]) }
        var last: [String: Int] = [:]
        // The two collections are checked alike, each with its own ledgers (a folder uses one).
        for (collection, group) in [("slots", slots), ("pushed", pushed.map(\.asSlot))] {
            let fetched = Dictionary(group.map { ($0.id, $0.transaction) }, uniquingKeysWith: max)
            let inFiles = files[collection, default: [:]]
            if fetched != inFiles { problems.append("\(collection): fetch and files disagree: fetch \(fetched.count) ids, files \(inFiles.count) ids") }
            problems += groupViolations(in: group)
            for slot in group where slot.id == Slot.ledgerID(slot.writer) { last[slot.writer] = max(last[slot.writer, default: 0], slot.transaction) }
        }
        for (writer, transaction) in acked where last[writer, default: 0] < transaction {
            problems.append("writer \(writer) acknowledged transaction \(transaction), the store ends at \(last[writer, default: 0])")
        }
        problems += await OutboxCheck.violations(store, folder, pushed: pushed)
        return (problems, last)
    }

    /// Parses every `.json` file with JSONSerialization (independently of Folio's parser) and
    /// checks that each slot is in exactly one day file of its collection, the one of its `day`.
    /// - Returns: collection (`slots`, `pushed`) → id → transaction, as the files hold them.
    static func parseFiles(_ folder: URL, problems: inout [String]) -> [String: [String: Int]] {
        var found: [String: [String: Int]] = [:]
        var places: [String: [String]] = [:]
        for path in files(under: folder) where path.hasSuffix(".json") {
            guard let data = FileManager.default.contents(atPath: folder.path + "/" + path),
                let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
            else {
                problems.append("\(path) is not a JSON object")
                continue
            }
            let collection = String(path.prefix { $0 != "/" })
            guard collection == "slots" || collection == "pushed" else { continue }
            guard let entities = object["entities"] as? [String: [String: Any]] else {
                problems.append("\(path) has no \"entities\" object")
                continue
            }
            for (id, entity) in entities {
                places[collection + "/" + id, default: []].append(path)
                found[collection, default: [:]][id] = entity["transaction"] as? Int ?? -1
                if let day = entity["day"] as? String, path != "\(collection)/\(day.prefix(7))/\(day).json" {
                    problems.append("\(id) with day \(day) is in \(path)")
                }
            }
        }
        for (id, paths) in places where paths.count != 1 { problems.append("\(id) is in \(paths.count) files: \(paths.sorted())") }
        return found
    }
}

extension StoreCheck {
    /// Every file below `folder`, relative paths, sorted (the machinery folder included).
    static func files(under folder: URL) -> [String] {
        let root = folder.standardizedFileURL.path
        var files: [String] = []
        var isDirectory: ObjCBool = false
        for path in FileManager.default.enumerator(atPath: root)?.allObjects as? [String] ?? []
        where FileManager.default.fileExists(atPath: root + "/" + path, isDirectory: &isDirectory) && !isDirectory.boolValue {
            files.append(path)
        }
        return files.sorted()
    }
}

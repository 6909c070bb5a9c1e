@testable import Folio
import FolioCrashSupport
import Foundation
import Testing

/// People save a day file with everyday tools while a Folio process keeps writing into it and
/// replacing it at every checkpoint (as short-lived processes such as `todo add` do at every
/// close). FORMAT.md, "Editing by hand": a save is never overwritten by a checkpoint, and a save
/// made from an older buffer does not delete what Folio committed since.
@Suite struct EditorRaceTests {
    /// The tools: `sed -i` (reads, writes a temp file, renames it over the file), a python rewrite
    /// in place (`open(path, "w")`: same inode, truncated and rewritten) and a python save by
    /// rename from a stale buffer (read, wait, write a temp file, `os.replace`). The python
    /// editors wait a random 0–40 ms between reading and saving, so Folio often checkpoints new
    /// entities into the file in between: their save is made from an older version.
    ///
    /// The model (FORMAT.md): every slot the writer acknowledged and every entity a tool's
    /// completed save added is in the store at the end, and in the file once the store closes.
    ///
    /// Before checkpoints compared and swapped, and merged saves from older versions, it printed
    /// `editor race: 90 saves (rename and in place), 40 lost saves, 35 lost entities`.
    /// `FOLIO_EDITOR_SEED` replays the tools' choices (not the timing); `FOLIO_EDITOR_KEEP=DIR`
    /// copies the folder and the writer's log (`writer.out`) there.
    @Test func savesDuringCheckpointsLoseNothing() async throws {
        let seed = ProcessInfo.processInfo.environment["FOLIO_EDITOR_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64(UInt32.max))
        let root = TemporaryFolder("race")
        let logs = root.url.deletingLastPathComponent()
        let stop = logs.appendingPathComponent("stop")
        let day = "slots/2026-01/2026-01-25.json"
        let child = try CrashChild(
            ["append", root.url.path, "100000", "--until-file", stop.path, "--max-seconds", "240"],
            logs: logs, name: "writer")
        defer { child.kill() }
        #expect(
            await (0..<1000).asyncContains { _ in
                try? await Task.sleep(for: .milliseconds(10))
                return root.exists(day) || !child.process.isRunning
            }, "the writer wrote its first slot")
        // The writer runs until the stop file (at most 240 s): on a loaded machine the test's own
        // tasks may wait a long time for a thread, and the race needs the writer writing.
        try #require(child.process.isRunning, "writer: \(child.errorText)")

        // The editors run on a thread of their own: the test pool may be starved by the suites
        // running beside this one, and an editor that waits for the pool saves a few times a minute.
        let path = root.file(day).path
        let writer = UncheckedBox(child.process)
        let outcome: Result<[String: String], EditorFailure> = await withCheckedContinuation { continuation in
            Thread {
                var random = SplitMix64(seed: seed)
                var saves: [String: String] = [:]   // entity id → the tool that saved it
                let start = ContinuousClock.now
                // 90 saves in at most 40 s; on a loaded machine, up to 150 s for the 30 that prove something.
                while saves.count < 90, ContinuousClock.now - start < .seconds(saves.count < 30 ? 150 : 40), writer.value.isRunning {
                    let id = "E-\(saves.count)"
                    let tool = ["sed -i", "python in place", "python rename from a stale buffer"][Int(random.next() % 3)]
                    let wait = String(Double(random.next() % 40) / 1000)
                    let failure: String?
                    switch tool {
                    case "sed -i":
                        failure = runTool("/bin/sed", ["-i", "s/\"entities\": {/\"entities\": {\(Self.entity(id)),/", path])
                    case "python in place":
                        failure = runTool("/usr/bin/env", ["python3", "-c", Self.pythonEditor, path, id, wait, "inplace"])
                    default:
                        failure = runTool("/usr/bin/env", ["python3", "-c", Self.pythonEditor, path, id, wait, "rename"])
                    }
                    if let failure {
                        continuation.resume(returning: .failure(EditorFailure(description: failure)))
                        return
                    }
                    saves[id] = tool
                }
                continuation.resume(returning: .success(saves))
            }.start()
        }
        let saves = try outcome.get()
        // A slow disk (a sync of hundreds of milliseconds in CI) may have let the writer commit
        // fewer than the 30 slots that prove something: it goes on until then (at most 120 s).
        let writing = ContinuousClock.now
        while child.lines.filter({ $0.hasPrefix("ack ") }).count < 30, child.process.isRunning,
            ContinuousClock.now - writing < .seconds(120)
        {
            try await Task.sleep(for: .milliseconds(50))
        }
        _ = FileManager.default.createFile(atPath: stop.path, contents: nil)
        let finished = await child.waitForExit(before: .now + .seconds(60))
        try #require(
            finished && child.exitedCleanly, "writer: \(child.errorText)\n\(child.lines.filter { $0.hasPrefix("log") }.suffix(40).joined(separator: "\n"))")
        let acked = Set(child.lines.compactMap { $0.hasPrefix("ack ") ? String($0.dropFirst(4)) : nil })

        let store = try await Store.open(at: root.url)
        let stored = Set(try await store.fetch(Query<Slot>(.all)).map(\.id))
        try await store.close()
        let file = try JSONSerialization.jsonObject(with: root.bytes(day)) as? [String: Any]
        let inFile = Set((file?["entities"] as? [String: Any] ?? [:]).keys)
        let lostSaves = saves.keys.filter { !stored.contains($0) || !inFile.contains($0) }.sorted()
        let lostEntities = acked.filter { !stored.contains($0) || !inFile.contains($0) }.sorted()
        print(
            "editor race: \(saves.count) saves (rename and in place), \(lostSaves.count) lost saves, \(lostEntities.count) lost entities (\(acked.count) slots written; seed \(seed))"
        )
        if let keep = ProcessInfo.processInfo.environment["FOLIO_EDITOR_KEEP"] { try? FileManager.default.copyItem(at: logs, to: URL(fileURLWithPath: keep)) }
        #expect(lostSaves.isEmpty, "lost saves: \(lostSaves.map { "\($0) (\(saves[$0]!))" })")
        #expect(lostEntities.isEmpty, "lost slots: \(lostEntities)")
        #expect(saves.count >= 30 && acked.count >= 30, "too few saves or writes to prove anything")
    }

    /// A slot as a person types it: the fields of `Slot`, in one line.
    static func entity(_ id: String) -> String {
        "\"\(id)\": {\"day\": \"2026-01-25\", \"deletedAt\": {}, \"group\": [], \"id\": \"\(id)\", \"transaction\": 0, \"writer\": \"E\"}"
    }

    /// `python3 -c EDITOR PATH ID WAIT MODE`: loads the file, adds the entity, waits, saves in
    /// place or by rename.
    static let pythonEditor = """
        import json, os, sys, time
        path, id, wait, mode = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
        with open(path) as f:
            data = json.load(f)
        data["entities"][id] = {"day": "2026-01-25", "deletedAt": {}, "group": [], "id": id, "transaction": 0, "writer": "E"}
        text = json.dumps(data, indent=2, sort_keys=True) + "\\n"
        time.sleep(wait)
        if mode == "inplace":
            with open(path, "w") as f:
                f.write(text)
        else:
            temp = os.path.join(os.path.dirname(path), "." + os.path.basename(path) + ".edit")
            with open(temp, "w") as f:
                f.write(text)
            os.replace(temp, path)
        """
}

/// Runs a tool to its end (at most 20 s, then it is killed) on the calling thread; nil if it
/// succeeded, else what went wrong.
func runTool(_ executable: String, _ arguments: [String]) -> String? {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let errors = FileManager.default.temporaryDirectory.appendingPathComponent("folio-tool-\(UUID().uuidString).err")
    _ = FileManager.default.createFile(atPath: errors.path, contents: nil)
    defer { try? FileManager.default.removeItem(at: errors) }
    do {
        let handle = try FileHandle(forWritingTo: errors)
        defer { try? handle.close() }
        process.standardError = handle
        process.standardOutput = FileHandle.nullDevice
        try process.run()
    } catch {
        return "\(executable) could not start: \(error)"
    }
    let deadline = ContinuousClock.now + .seconds(20)
    while process.isRunning, ContinuousClock.now < deadline { Thread.sleep(forTimeInterval: 0.002) }
    if process.isRunning { process.terminate() }
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        let message = (try? String(contentsOf: errors, encoding: .utf8)) ?? ""
        return "\(executable) \(arguments.prefix(2).joined(separator: " ")) failed (\(process.terminationStatus)): \(message)"
    }
    return nil
}

struct EditorFailure: Error, CustomStringConvertible {
    var description: String
}

/// Hands a value to another thread; the test owns it and does not touch it meanwhile.
final class UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

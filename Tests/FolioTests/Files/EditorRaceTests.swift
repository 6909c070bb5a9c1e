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
    @Test func savesDuringCheckpointsLoseNothing() async throws {
        let seed = ProcessInfo.processInfo.environment["FOLIO_EDITOR_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64(UInt32.max))
        var random = SplitMix64(seed: seed)
        let root = TemporaryFolder("race")
        let logs = root.url.deletingLastPathComponent()
        let stop = logs.appendingPathComponent("stop")
        let day = "slots/2026-01/2026-01-25.json"
        let child = try CrashChild(["append", root.url.path, "100000", "--until-file", stop.path, "--max-seconds", "60"],
                                   logs: logs, name: "writer")
        defer { child.kill() }
        #expect(await (0..<1000).asyncContains { _ in
            try? await Task.sleep(for: .milliseconds(10))
            return root.exists(day) || !child.process.isRunning
        }, "the writer wrote its first slot")
        try #require(child.process.isRunning, "writer: \(child.errorText)")

        var saves: [String: String] = [:]   // entity id → the tool that saved it
        let start = ContinuousClock.now
        while saves.count < 90, ContinuousClock.now - start < .seconds(25), child.process.isRunning {
            let id = "E-\(saves.count)"
            let tool = ["sed -i", "python in place", "python rename from a stale buffer"][Int(random.next() % 3)]
            let wait = Double(random.next() % 40) / 1000
            let path = root.file(day).path
            switch tool {
            case "sed -i":
                try await runTool("/bin/sed", ["-i", "s/\"entities\": {/\"entities\": {\(Self.entity(id)),/", path])
            case "python in place":
                try await runTool("/usr/bin/env", ["python3", "-c", Self.pythonEditor, path, id, String(wait), "inplace"])
            default:
                try await runTool("/usr/bin/env", ["python3", "-c", Self.pythonEditor, path, id, String(wait), "rename"])
            }
            saves[id] = tool
        }
        _ = FileManager.default.createFile(atPath: stop.path, contents: nil)
        let finished = await child.waitForExit(before: .now + .seconds(60))
        try #require(finished && child.exitedCleanly, "writer: \(child.errorText)\n\(child.lines.filter { $0.hasPrefix("log") }.suffix(40).joined(separator: "\n"))")
        let acked = Set(child.lines.compactMap { $0.hasPrefix("ack ") ? String($0.dropFirst(4)) : nil })

        let store = try await Store.open(at: root.url)
        let stored = Set(try await store.fetch(Query<Slot>(.all)).map(\.id))
        try await store.close()
        let file = try JSONSerialization.jsonObject(with: root.bytes(day)) as? [String: Any]
        let inFile = Set((file?["entities"] as? [String: Any] ?? [:]).keys)
        let lostSaves = saves.keys.filter { !stored.contains($0) || !inFile.contains($0) }.sorted()
        let lostEntities = acked.filter { !stored.contains($0) || !inFile.contains($0) }.sorted()
        print("editor race: \(saves.count) saves (rename and in place), \(lostSaves.count) lost saves, \(lostEntities.count) lost entities (\(acked.count) slots written; seed \(seed))")
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

/// Runs a tool to its end (at most 20 s); it must succeed.
func runTool(_ executable: String, _ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) async throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let errors = Pipe()
    process.standardError = errors
    process.standardOutput = FileHandle.nullDevice
    try process.run()
    let deadline = ContinuousClock.now + .seconds(20)
    while process.isRunning, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(2)) }
    if process.isRunning { process.terminate() }
    process.waitUntilExit()
    let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    try #require(process.terminationStatus == 0, "\(executable) \(arguments.prefix(2).joined(separator: " ")) failed: \(message)", sourceLocation: sourceLocation)
}

@testable import Folio
import Foundation
import Testing

/// Copies of a live folder with the real tools (ARCHITECTURE.md, "Copies"; README, "Copying a
/// store"): a child process opens the store, commits one transaction (slots with their outbox
/// commands) and closes it, again and again (a short-lived process checkpoints at every close:
/// the worst case for a plain copy). Meanwhile the test takes copies with `rsync -a` and `cp -a`
/// of the live folder, and snapshots (`Store.snapshot(to:)`, then `rsync -a` of the snapshot:
/// the documented recipe for another machine). Every copy is verified and opened, and checked
/// against the spec by StoreCheck (CrashTests.swift): every transaction whole (its group of
/// slots), every pushed change with its outbox command and every command with its change, and,
/// for a snapshot, every transaction acknowledged before it began.
///
/// A third plain copier stands for a sync tool: a python script that copies the files in a
/// seeded random order, with short pauses (any file order must be safe, not only rsync's sorted
/// one and cp's directory order).
///
/// A snapshot must always be whole. A plain copy of a live folder may be torn (a data file
/// copied after a checkpoint that the copied journal predates): such a copy must be refused by
/// opening and by `folio verify` (FORMAT.md, "Copying the folder"); a torn copy that opens is
/// "silent partial", and fails the test. The model is StoreCheck's, from the spec: every
/// transaction whole, every pushed change with its command and every command with its change.
@Suite struct LiveCopyToolsTests {
    /// Rounds of copies, each one per tool: a fixed amount of work that a slow machine reaches by
    /// taking longer.
    static let copiesPerTool = 5

    @Test(.enabled(if: Tools.runs("rsync"), "needs rsync (\(Tools.install("rsync"))); FOLIO_REQUIRE_TOOLS=1 makes its absence a failure"))
    func copiesOfALiveFolderWithRsyncCpAndSnapshots() async throws {
        let rsync = try Tools.require("rsync")
        let cp = try Tools.require("cp")
        let root = TemporaryFolder("live")
        let work = root.url.deletingLastPathComponent()
        let seed = UInt64.random(in: 1...UInt64(UInt32.max))
        let child = try CrashChild(
            [
                "write", root.url.path, "\(seed)", "1000000", "relaxed", "W", "--outbox",
                "--reopen-every", "1", "--delay-ms", "20", "--max-seconds", "900",
            ],
            logs: work, name: "writer")
        defer { child.kill() }
        try await child.waitForFirstAck()
        var readOnly = Store.Configuration()
        readOnly.readOnly = true
        let source = try await Store.open(at: root.url, configuration: readOnly)

        var counts = (rsync: 0, cp: 0, shuffled: 0, snapshots: 0)
        let python = try Tools.require("python3")
        var refused = 0, silent = 0, silentNotes: [String] = []
        var snapshotProblems: [String] = []
        let start = ContinuousClock.now
        var round = 0
        while round < Self.copiesPerTool, child.process.isRunning {
            // Each round: one copy per tool, then the checks.
            round += 1
            // rsync -a of the live folder.
            let viaRsync = work.appendingPathComponent("rsync-\(round)")
            try Self.run(rsync, ["-a", root.url.path + "/", viaRsync.path + "/"])
            counts.rsync += 1
            // cp -a of the live folder.
            let viaCp = work.appendingPathComponent("cp-\(round)")
            try Self.run(cp, ["-a", root.url.path, viaCp.path])
            counts.cp += 1
            // A sync tool: every file in a random order.
            let viaShuffle = work.appendingPathComponent("shuffled-\(round)")
            try Self.run(python, ["-c", Self.shuffledCopy, root.url.path, viaShuffle.path, "\(seed &+ UInt64(round))"])
            counts.shuffled += 1
            // A snapshot, then rsync -a of the snapshot (another machine, in the recipe).
            let acked = child.acks.last ?? 0
            let snapshot = work.appendingPathComponent("snapshot-\(round)")
            let report = try await source.snapshot(to: snapshot)
            #expect(report.copied >= 1 && report.linked >= 1, "\(report)")
            let shipped = work.appendingPathComponent("shipped-\(round)")
            try Self.run(rsync, ["-a", snapshot.path + "/", shipped.path + "/"])
            counts.snapshots += 1

            for (label, copy) in [("rsync", viaRsync), ("cp", viaCp), ("shuffled", viaShuffle)] {
                let problems = await Self.problems(copy, acked: [:])
                // Refused: opening throws inconsistentCopy, and verify of the copy as taken names it.
                let openRefuses = problems.torn.contains { $0.hasPrefix("the store does not open") && $0.contains("copy of a store taken while") }
                let verifyRefuses = problems.named.contains { $0.contains("copy taken while Folio was writing") }
                if openRefuses || verifyRefuses {
                    refused += 1
                    if openRefuses != verifyRefuses {
                        silent += 1
                        silentNotes.append(
                            "\(label) copy \(round): refused by \(openRefuses ? "open" : "verify") only: \((problems.torn + problems.named).prefix(3))")
                    }
                    continue
                }
                guard !problems.torn.isEmpty || !problems.named.isEmpty else { continue }
                silent += 1
                silentNotes.append("\(label) copy \(round): \((problems.torn + problems.named).prefix(3).joined(separator: "; "))")
            }
            for (label, copy) in [("snapshot", snapshot), ("rsync of the snapshot", shipped)] {
                let problems = await Self.problems(copy, acked: ["W": acked])
                snapshotProblems += (problems.named + problems.torn).prefix(5).map { "\(label) \(round): \($0)" }
            }
        }
        try await source.close()
        // On a loaded machine the writer may reach --max-seconds; it must not have failed.
        #expect(child.process.isRunning || child.exitedCleanly, "the writer failed: \(child.errorText)")
        print(
            "live copies: \(counts.rsync) rsync, \(counts.cp) cp, \(counts.shuffled) shuffled, \(counts.snapshots) snapshots, \(silent) silent partial "
                + "(\(refused) plain copies refused by open and verify; \(child.acks.count) transactions, one process each; seed \(seed))")
        #expect(silent == 0, "\(silentNotes.prefix(10).joined(separator: "\n"))")
        #expect(snapshotProblems.isEmpty, "\(snapshotProblems.prefix(20).joined(separator: "\n"))")
        #expect(
            counts.snapshots == Self.copiesPerTool && counts.rsync == Self.copiesPerTool && counts.cp == Self.copiesPerTool,
            "the writer stopped before every round was copied (\(ContinuousClock.now - start))")
    }

    /// What `folio verify` (before and after opening) or opening names (`named`), and what
    /// checking the opened copy against the spec finds (`torn`).
    static func problems(_ copy: URL, acked: [String: Int]) async -> (named: [String], torn: [String]) {
        var named: [String] = []
        do {
            let report = try await Store.verify(at: copy)
            named = report.problems.filter { $0.severity == .error }.map(\.description)
        } catch {
            named = ["verify failed: \(error)"]
        }
        let found = await StoreCheck.run(copy, acked: acked)
        // Opening refusing the copy names its cause too.
        if let refusal = found.violations.first(where: { $0.hasPrefix("the store does not open") }) { named.append(refusal) }
        // And so does `folio verify` of the opened copy (recovery may leave the tear in view, such
        // as an id in two files).
        do {
            let report = try await Store.verify(at: copy)
            named += report.problems.filter { $0.severity == .error }.map { "after opening: \($0.description)" }
        } catch {
            named.append("verify after opening failed: \(error)")
        }
        return (named, found.violations)
    }

    /// Copies a folder's files in a seeded random order, pausing up to 2 ms between files, as a
    /// sync tool might. Arguments: source, destination, seed.
    static let shuffledCopy = """
        import os, random, shutil, sys, time
        source, target, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
        files = []
        for folder, _, names in os.walk(source):
            files += [os.path.join(folder, name) for name in names]
        random.Random(seed).shuffle(files)
        pause = random.Random(seed + 1)
        for path in files:
            out = os.path.join(target, os.path.relpath(path, source))
            os.makedirs(os.path.dirname(out), exist_ok=True)
            try:
                shutil.copy2(path, out)
            except FileNotFoundError:
                pass
            time.sleep(pause.random() * 0.002)
        """

    /// Runs a tool to completion (bounded: it copies a small folder), failing on a bad exit.
    /// rsync's exit 24 ("some files vanished") is normal for a live folder.
    static func run(_ tool: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let status = process.terminationStatus
        let vanished = tool.hasSuffix("rsync") && status == 24
        // cp -a of a live folder reports files that vanished between listing and copying.
        let cpVanished = tool.hasSuffix("/cp") && status == 1 && text.contains("No such file")
        guard status == 0 || vanished || cpVanished else {
            throw FolioError(.io, "\(tool) \(arguments.joined(separator: " ")) exited with \(status): \(text)")
        }
    }
}

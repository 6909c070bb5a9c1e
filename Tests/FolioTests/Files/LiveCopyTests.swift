@testable import Folio
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Copies of a folder while a writer process (`folio-crash-child`) keeps writing in it.
///
/// FORMAT.md, "Copying the folder": a plain copy (rsync, cp: `.folio/` sorts first, the data
/// files are copied after it) of a live folder either opens to a state that is a prefix of the
/// history, or is refused (``FolioError/Code/inconsistentCopy``) because a checkpoint ran while
/// it was copied. A copy during which no checkpoint ran is never refused. `backup(to:)` is
/// consistent whatever the timing.
///
/// The check is not vacuous: with the copy check turned off (CopyCheck.isCopy answering false),
/// most copies that overlap a checkpoint are torn: ids in two day files, group members missing.
@Suite struct LiveCopyTests {
    /// The writer's idle checkpoint delay.
    static let checkpointDelay = 300

    @Test func aPlainCopyOfALiveFolderIsWholeOrRefused() async throws {
        let root = TemporaryFolder("live")
        let logs = root.url.deletingLastPathComponent()
        // Bursts of about ten transactions, then a pause longer than the delay: the idle
        // checkpoint runs in each pause.
        let child = try CrashChild(
            [
                "write", root.url.path, "5", "1000000", "full", "L",
                "--delay-ms", "\(Self.checkpointDelay)", "--threshold-kib", "65536",
                "--idle-ms", "\(Self.checkpointDelay + 50)", "--idle-every", "10", "--max-seconds", "900",
            ],
            logs: logs, name: "live")
        defer { child.kill() }
        try await child.waitForFirstAck()

        var copies = 0, checked = 0, straddled = 0, refused = 0, violationCount = 0
        var violations: [String] = []   // the first few of each copy, for the failure message
        let start = ContinuousClock.now
        // Copy back to back for a few seconds (about ten idle checkpoints). Every copy during
        // which a checkpoint replaced a file, recorded its writes or reset the journal is
        // checked, and every tenth other.
        while ContinuousClock.now - start < .seconds(5), copies < 2000, child.process.isRunning {
            let acked = child.acks.last ?? 0
            let before = fingerprint(root.url)
            let copy = logs.appendingPathComponent("copy")
            try? FileManager.default.removeItem(at: copy)
            try copyTree(root.url, to: copy)
            copies += 1
            let changed = fingerprint(root.url) != before
            if changed { straddled += 1 }
            guard changed || copies % 10 == 0 else { continue }
            checked += 1
            let keep = ProcessInfo.processInfo.environment["FOLIO_KEEP_TORN"]
            if let keep { try? FileManager.default.copyItem(at: copy, to: URL(fileURLWithPath: keep + "/taken-\(copies)")) }
            let found = await StoreCheck.run(copy, acked: ["L": acked])
            if found.violations.count == 1, found.violations[0].hasPrefix("the store does not open"),
                found.violations[0].contains("copy of a store taken while")
            {
                refused += 1
                // Refusing a copy no checkpoint overlapped is wrong: every version in place was
                // logged before its rename, so such a copy always matches its journal.
                if !changed {
                    violations.append("copy \(copies), no checkpoint during it, was refused: \(found.violations[0])")
                    violationCount += 1
                }
                continue
            }
            if let keep {
                if found.violations.isEmpty { try? FileManager.default.removeItem(at: URL(fileURLWithPath: keep + "/taken-\(copies)")) }
            }
            violations += found.violations.prefix(5).map { "copy \(copies) (checkpoint during copy: \(changed)): \($0)" }
            violationCount += found.violations.count
        }
        // On a loaded machine the writer may reach --max-seconds; it must not have failed.
        #expect(child.process.isRunning || child.exitedCleanly, "the writer failed: \(child.errorText)")
        print(
            "live copy: \(copies) copies, \(checked) checked, \(straddled) during a checkpoint, "
                + "\(refused) refused as inconsistent copies, \(violationCount) violations")
        #expect(violations.isEmpty, "\(violations.prefix(20).joined(separator: "\n"))")
        #expect(checked > 0)
    }

    @Test func aBackupOfALiveFolderIsConsistent() async throws {
        let root = TemporaryFolder("source")
        let logs = root.url.deletingLastPathComponent()
        let child = try CrashChild(
            [
                "write", root.url.path, "6", "1000000", "full", "K",
                "--delay-ms", "20", "--threshold-kib", "64", "--idle-ms", "25", "--max-seconds", "900",
            ],
            logs: logs, name: "backup")
        defer { child.kill() }
        try await child.waitForFirstAck()
        let store = try await Store.open(at: root.url)
        var violations: [String] = []
        var last = 0
        for index in 0..<5 {
            // Every transaction acknowledged before the backup starts must be in it.
            let acked = child.acks.last ?? 0
            let destination = logs.appendingPathComponent("backup-\(index)")
            try await store.backup(to: destination)
            let found = await StoreCheck.run(destination, acked: ["K": acked])
            violations += found.violations.map { "backup \(index): \($0)" }
            #expect(found.last["K", default: 0] >= last, "backup \(index) is older than the one before it")
            last = found.last["K", default: 0]
            try await Task.sleep(for: .milliseconds(30))
        }
        try await store.close()
        // On a loaded machine the writer may reach --max-seconds; it must not have failed.
        #expect(child.process.isRunning || child.exitedCleanly, "the writer failed: \(child.errorText)")
        child.kill()
        let source = await StoreCheck.run(root.url, acked: ["K": child.acks.last ?? 0])
        violations += source.violations.map { "source after the kill: \($0)" }
        print("backup: 5 backups of a live folder (last at transaction \(last)), \(violations.count) violations")
        #expect(violations.isEmpty, "\(violations.prefix(20).joined(separator: "\n"))")
    }

    // MARK: Helpers

    /// Copies like rsync: directories depth first, names in sorted order, each file's bytes (with
    /// plain POSIX calls, to keep the copy fast). A file that vanishes between listing and reading
    /// (a temp file renamed, a day file emptied) is skipped, as rsync does.
    private func copyTree(_ source: URL, to destination: URL) throws {
        let manager = FileManager.default
        try manager.createDirectory(at: destination, withIntermediateDirectories: true)
        for name in try manager.contentsOfDirectory(atPath: source.path).sorted() {
            let from = source.appendingPathComponent(name).path, to = destination.appendingPathComponent(name).path
            var isDirectory: ObjCBool = false
            guard manager.fileExists(atPath: from, isDirectory: &isDirectory) else { continue }
            if isDirectory.boolValue {
                try copyTree(URL(fileURLWithPath: from), to: URL(fileURLWithPath: to))
                continue
            }
            let input = open(from, O_RDONLY)
            guard input >= 0 else { continue }
            defer { close(input) }
            let output = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            guard output >= 0 else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: to]) }
            defer { close(output) }
            var buffer = [UInt8](repeating: 0, count: 1 << 16)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
                guard count > 0 else { break }
                let written = buffer.withUnsafeBytes { write(output, $0.baseAddress, count) }
                guard written == count else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: to]) }
            }
        }
    }

    /// What a checkpoint changes: the journal's header (a reset), and each file's inode and
    /// modification time (a rename over it).
    private func fingerprint(_ folder: URL) -> [String] {
        let journal = FileHandle(forReadingAtPath: folder.path + "/.folio/journal")
        defer { try? journal?.close() }
        var parts = ["journal \(Array((try? journal?.read(upToCount: Journal.headerSize)) ?? Data()))"]
        // A checkpoint appends what it wrote to `.folio/written` before it resets the journal.
        let log = (try? FileManager.default.attributesOfItem(atPath: folder.path + "/" + WrittenLog.path)) ?? [:]
        parts.append("written \(log[.size] ?? 0) \(log[.systemFileNumber] ?? 0)")
        for path in StoreCheck.files(under: folder) where !path.hasPrefix(".folio") {
            let attributes = (try? FileManager.default.attributesOfItem(atPath: folder.path + "/" + path)) ?? [:]
            parts.append("\(path) \(attributes[.systemFileNumber] ?? 0) \(attributes[.modificationDate] ?? 0)")
        }
        return parts
    }
}

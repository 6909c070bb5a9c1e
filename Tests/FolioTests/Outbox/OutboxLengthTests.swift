import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 29: the outbox's length costs nothing to the operations that do not send. A read of one
/// day, an entity's sync status, a commit, a coalescing commit, a close (a checkpoint), a fresh
/// process's status query, and `Store.status(at:)` of the closed store (what `folio status` and
/// the head of `folio outbox list` read) open no more files in a store with 50,000 pending
/// commands than in the same store with 10. Counted, not timed: each operation runs in a `folio-crash-child`
/// (`outbox-costs`, Tests/CrashChild/OutboxCosts.swift) under strace, which logs every `open` and
/// the child's phase markers, and each phase's distinct files under the store's folder are
/// compared (folders apart).
///
/// The two folders hold the same 50,000 entities in the same files (a day-partitioned push
/// collection and a coalescing one), written in the same transactions; in one, 49,990 of them were
/// written through local-only twins of the entity types, so only the ten the operations touch
/// wait as commands. A store that reads every command file to answer one entity's question opens
/// 50,000 more files in that phase.
@Suite struct OutboxLengthTests {
    /// Entities beyond the ten the operations touch, in both folders.
    static let extra = 49_990
    /// How many more bytes the 100 warm commits may read or write with the long outbox: each
    /// looks its entity up in the entity index, a binary search of 43-byte lines (log2 50,000,
    /// about 16 lines, against 3 with 10), up to two lookups a commit: 100 × 2 × 16 × 43 bytes,
    /// about 140 KB (measured: 85 KB). The log `.folio/written` read whole is 2.9 MB.
    static let byteSlack = 200 << 10
    /// The phases, in the order the children mark them (`fresh-…`: the second child).
    static let phases = [
        "open", "read", "status", "commit", "coalesce", "commits", "close", "fresh-open", "fresh-status", "fresh-close", "store-status", "outbox-head",
    ]

    @Test(.enabled(if: Tools.runs("strace"), "needs strace (\(Tools.install("strace"))); FOLIO_REQUIRE_TOOLS=1 makes its absence a failure"))
    func aLongOutboxOpensNoMoreFilesThanAShortOne() async throws {
        let strace = try Tools.require("strace")
        let logs = TemporaryFolder("logs", onMemoryFileSystem: true)
        try FileManager.default.createDirectory(at: logs.url, withIntermediateDirectories: true)
        let short = TemporaryFolder("short", onMemoryFileSystem: true), long = TemporaryFolder("long", onMemoryFileSystem: true)

        // One child per folder, side by side: the long one takes some 25 s on a two-core machine.
        let started = ContinuousClock.now
        let preparers = [
            try CrashChild(["outbox-costs", "prepare", short.url.path, "\(Self.extra)", "local"], logs: logs.url, name: "prepare-short"),
            try CrashChild(["outbox-costs", "prepare", long.url.path, "\(Self.extra)", "pending"], logs: logs.url, name: "prepare-long"),
        ]
        for preparer in preparers {
            let exited = await preparer.waitForExit(before: started + .seconds(300))
            if !exited { preparer.kill() }
            try #require(exited && preparer.exitedCleanly, "preparing a folder failed (or took 300 s): \(preparer.errorText)")
        }
        let preparation = ContinuousClock.now - started
        try #require(
            Self.commandFiles(short) == 10 && Self.commandFiles(long) == Self.extra + 10,
            "outbox/ holds \(Self.commandFiles(short)) and \(Self.commandFiles(long)) files")

        var found: [String: [String: PhaseOpens]] = [:]   // folder → phase → its opens
        var answers: [String: [String]] = [:]   // folder → what the children saw
        for (name, folder) in [("short", short), ("long", long)] {
            for mode in ["run", "status"] {
                let log = logs.file("\(name)-\(mode).strace")
                let child = try TracedChild(strace, log: log, ["outbox-costs", mode, folder.url.path], logs: logs.url, name: "\(name)-\(mode)")
                answers[name, default: []] += try await child.finish(before: .now + .seconds(180)).filter { !$0.hasPrefix("phase ") }
                let root = folder.url.resolvingSymlinksInPath().path
                for (phase, opens) in Self.opens(inLog: try String(contentsOf: log, encoding: .utf8), under: root) {
                    found[name, default: [:]][phase, default: PhaseOpens()].add(opens)
                }
            }
        }
        // The same answers from both folders: the operations did the same work; the status of the
        // closed store counts every command file, and reads the head it was asked for.
        for (name, folder) in [("short", short), ("long", long)] {
            let counted = answers[name]?.filter { $0.hasPrefix("outbox ") }
            #expect(counted == ["outbox \(Self.commandFiles(folder)) pending, head of 1 and 10"], "\(name)")
            answers[name]?.removeAll { $0.hasPrefix("outbox ") }
        }
        #expect(answers["short"] == ["fetched 2", "status pending (1)", "done", "status pending (2)", "done"])
        #expect(answers["long"] == answers["short"])

        let few = found["short"] ?? [:], many = found["long"] ?? [:]
        let ordered = Self.phases + Set(few.keys).union(many.keys).subtracting(Self.phases).sorted()
        func counts(_ phase: String) -> String {
            let (a, b) = (few[phase] ?? PhaseOpens(), many[phase] ?? PhaseOpens())
            return
                "\(phase) \(a.files.count)/\(b.files.count) (\(a.folders.count)/\(b.folders.count)) read \(a.read)/\(b.read) B written \(a.written)/\(b.written) B"
        }
        print(
            "OutboxLengthTests: phase counts 10 vs \(Self.extra + 10) (files, then folders): "
                + ordered.map(counts).joined(separator: ", ")
                + "; preparing took \(Self.seconds(preparation)), all \(Self.seconds(ContinuousClock.now - started))")

        // The warm commits with their checkpoint read and write the same journal records, partition
        // files, command files and log lines in both folders; what may differ is the entity
        // index's lines a lookup reads (a binary search: a few more steps, 43 bytes each, in the
        // long one; ``byteSlack``). A phase that reads `.folio/written` or lists `outbox/` reads megabytes more.
        for phase in ["commits"] {
            let (few, many) = (few[phase] ?? PhaseOpens(), many[phase] ?? PhaseOpens())
            #expect(few.written > 0 && few.read > 0, "\(phase): no bytes counted")
            #expect(
                many.read <= few.read + Self.byteSlack && many.written <= few.written + Self.byteSlack,
                """
                \(phase) read \(few.read) and wrote \(few.written) bytes with 10 pending commands, read \(many.read) and wrote \(many.written) \
                with \(Self.extra + 10); most read with \(Self.extra + 10): \(many.largestReads.prefix(5))
                """)
        }
        for phase in ordered {
            let (few, many) = (few[phase] ?? PhaseOpens(), many[phase] ?? PhaseOpens())
            guard many.files.count > few.files.count || many.folders.count > few.folders.count else { continue }
            let more = (many.files.keys.filter { few.files[$0] == nil } + many.folders.keys.filter { few.folders[$0] == nil }).sorted()
            let listed = more.prefix(20).map { path in
                let times = many.files[path] ?? many.folders[path] ?? 0
                return times > 1 ? "\(path) (opened \(times) times)" : path
            }
            Issue.record(
                """
                \(phase) opened \(few.files.count) files (\(few.folders.count) folders) with 10 pending commands, \
                \(many.files.count) files (\(many.folders.count) folders) with \(Self.extra + 10); \(more.count) paths more, \
                the first \(listed.count): \(listed.joined(separator: ", "))
                """)
        }
    }

    /// The log reading the test relies on, on lines as strace 6 writes them: a call split between
    /// two threads, padding before the result, a failed open, a path outside the store.
    @Test func theLogIsReadByPhaseWithSplitCallsJoined() {
        let log = """
            7 access("/folio-phase/commit", F_OK)  = -1 ENOENT (No such file or directory)
            7 openat(AT_FDCWD</w>, "/s/entries/2025-03", O_RDONLY|O_NONBLOCK|O_CLOEXEC|O_DIRECTORY <unfinished ...>
            8 openat(AT_FDCWD</w>, "/s/entries/2025-04", O_RDONLY|O_NONBLOCK|O_CLOEXEC|O_DIRECTORY <unfinished ...>
            7 <... openat resumed>)             = 9</s/entries/2025-03>
            7 access("/folio-phase/close", F_OK) = -1 ENOENT (No such file or directory)
            8 <... openat resumed>)             = 11</s/entries/2025-04>
            7 openat(AT_FDCWD</w>, "/s/outbox/00000000000000000011.json", O_WRONLY|O_CREAT|O_TRUNC|O_CLOEXEC, 0644) = 12</s/outbox/00000000000000000011.json>
            7 openat(AT_FDCWD</w>, "/s/outbox/sent", O_RDONLY|O_NONBLOCK|O_CLOEXEC|O_DIRECTORY) = -1 ENOENT (No such file or directory)
            7 openat(AT_FDCWD</w>, "/s", O_RDONLY|O_CLOEXEC|O_DIRECTORY) = 12</s>
            7 openat(AT_FDCWD</w>, "/s2/folio.json", O_RDONLY|O_CLOEXEC) = 12</s2/folio.json>
            7 openat(AT_FDCWD</w>, "/s/outbox/00000000000000000011.json", O_RDONLY|O_CLOEXEC) = 12</s/outbox/00000000000000000011.json>
            """
        let opens = Self.opens(inLog: log, under: "/s")
        #expect(opens["commit"]?.folders == ["entries/2025-03": 1, "entries/2025-04": 1])
        #expect(opens["commit"]?.files == [:])
        #expect(opens["close"]?.files == ["outbox/00000000000000000011.json": 2])
        #expect(opens["close"]?.folders == [".": 1])
    }

    /// The distinct files and folders a phase opened, each with how many times, and the bytes it
    /// read (folder listings included) and wrote under the store's folder.
    struct PhaseOpens {
        var files: [String: Int] = [:]
        var folders: [String: Int] = [:]
        var read = 0
        var written = 0
        /// Bytes read, by path.
        var readFrom: [String: Int] = [:]

        mutating func add(_ other: PhaseOpens) {
            files.merge(other.files, uniquingKeysWith: +)
            folders.merge(other.folders, uniquingKeysWith: +)
            read += other.read
            written += other.written
            readFrom.merge(other.readFrom, uniquingKeysWith: +)
        }

        /// The paths most read from, with their bytes.
        var largestReads: [String] { readFrom.sorted { $0.value > $1.value }.map { "\($0.key): \($0.value)" } }
    }

    static func seconds(_ duration: Duration) -> String {
        String(format: "%.1f s", Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18)
    }

    static func commandFiles(_ folder: TemporaryFolder) -> Int {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.file("outbox").path)) ?? []).filter { $0.hasSuffix(".json") }.count
    }

    /// The successful opens under `root` in an `strace -f -y` log, by phase: a phase begins at the
    /// child's `access("/folio-phase/NAME")`. A call strace split in two (`<unfinished ...>`, then
    /// `<... openat resumed>` on the same thread) counts in the phase it began in. The path is the
    /// one `-y` shows for the new descriptor (what was opened, whatever the call's form), else the
    /// call's first string; folders are those opened with `O_DIRECTORY`. Paths are relative to
    /// `root` (`.` for itself).
    static func opens(inLog log: String, under root: String) -> [String: PhaseOpens] {
        var phase = "start"
        var result: [String: PhaseOpens] = [:]
        var unfinished: [Substring: (phase: String, call: Substring)] = [:]   // thread → call begun
        for line in log.split(separator: "\n") {
            guard let space = line.firstIndex(of: " ") else { continue }
            let thread = line[..<space], text = line[space...].drop { $0 == " " }
            if let marker = text.firstRange(of: "\"/folio-phase/") {
                phase = String(text[marker.upperBound...].prefix { $0 != "\"" })
                continue
            }
            let call: Substring, callPhase: String
            if text.hasPrefix("<... "), let resumed = text.firstRange(of: " resumed>") {
                guard let begun = unfinished.removeValue(forKey: thread) else { continue }
                call = begun.call + text[resumed.upperBound...]
                callPhase = begun.phase
            } else if let transfer = Self.transfers.first(where: { text.hasPrefix($0 + "(") }) {
                if text.hasSuffix("<unfinished ...>") {
                    unfinished[thread] = (phase, text.dropLast("<unfinished ...>".count))
                    continue
                }
                Self.count(transfer, text, under: root, into: &result[phase, default: PhaseOpens()])
                continue
            } else if text.hasPrefix("open(") || text.hasPrefix("openat(") || text.hasPrefix("openat2(") {
                if text.hasSuffix("<unfinished ...>") {
                    unfinished[thread] = (phase, text.dropLast("<unfinished ...>".count))
                    continue
                }
                call = text
                callPhase = phase
            } else {
                continue
            }
            if let transfer = Self.transfers.first(where: { call.hasPrefix($0 + "(") }) {
                Self.count(transfer, call, under: root, into: &result[callPhase, default: PhaseOpens()])
                continue
            }
            // strace pads before ` = ` to align results, and more after a resumed call.
            guard let equals = call.range(of: " = ", options: .backwards) else { continue }
            let answer = call[equals.upperBound...].drop { $0 == " " }
            guard let first = answer.first, first.isNumber else { continue }   // -1: failed
            var path: Substring
            if let open = answer.firstIndex(of: "<"), let close = answer.lastIndex(of: ">"), open < close {
                path = answer[answer.index(after: open)..<close]
            } else if let quote = call.firstIndex(of: "\"") {
                path = call[call.index(after: quote)...].prefix { $0 != "\"" }
            } else {
                continue
            }
            if path.hasSuffix(" (deleted)") { path = path.dropLast(" (deleted)".count) }
            let relative: String
            if path == root {
                relative = "."
            } else if path.hasPrefix(root + "/") {
                relative = String(path.dropFirst(root.count + 1))
            } else {
                continue
            }
            if call.contains("O_DIRECTORY") {
                result[callPhase, default: PhaseOpens()].folders[relative, default: 0] += 1
            } else {
                result[callPhase, default: PhaseOpens()].files[relative, default: 0] += 1
            }
        }
        return result
    }
}

extension OutboxLengthTests {
    /// The calls that move bytes, counted by ``count(_:_:under:into:)``.
    static let transfers = ["read", "pread64", "write", "pwrite64", "getdents64"]

    /// Adds a read or write of a descriptor under `root` (`-y`: `9</path>`, its first argument)
    /// to a phase: its result, the bytes moved.
    static func count(_ transfer: String, _ call: Substring, under root: String, into phase: inout PhaseOpens) {
        let arguments = call.dropFirst(transfer.count + 1)
        guard let open = arguments.firstIndex(of: "<"), arguments[..<open].allSatisfy(\.isNumber),
            let close = arguments[open...].firstIndex(of: ">"),
            let equals = call.range(of: " = ", options: .backwards),
            let bytes = Int(call[equals.upperBound...].drop { $0 == " " }.prefix { $0.isNumber || $0 == "-" }), bytes > 0
        else { return }
        let path = String(arguments[arguments.index(after: open)..<close])
        guard path == root || path.hasPrefix(root + "/") else { return }
        if transfer.hasPrefix("write") || transfer.hasPrefix("pwrite") {
            phase.written += bytes
        } else {
            phase.read += bytes
            phase.readFrom[String(path.dropFirst(root.count)), default: 0] += bytes
        }
    }
}

/// A `folio-crash-child` under `strace -f`, which logs its opens and phase markers to `log`. Its
/// output and strace's messages (the child's stderr too) go to files in `logs`, as
/// ``CrashChild``'s do.
private final class TracedChild {
    let process = Process()
    let output: URL
    let errors: URL

    init(_ strace: String, log: URL, _ arguments: [String], logs: URL, name: String) throws {
        output = logs.appendingPathComponent("\(name).out")
        errors = logs.appendingPathComponent("\(name).err")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errors.path, contents: nil)
        let out = try FileHandle(forWritingTo: output), err = try FileHandle(forWritingTo: errors)
        defer { try? out.close(); try? err.close() }
        process.executableURL = URL(fileURLWithPath: strace)
        // --seccomp-bpf stops the child only at the calls traced: several times faster. -y names
        // each new descriptor's file; -qq keeps strace's own notes out of the child's stderr.
        process.arguments =
            [
                "-f", "--seccomp-bpf", "-y", "-qq", "-e",
                "trace=open,openat,openat2,access,faccessat,faccessat2,read,pread64,write,pwrite64,getdents64",
                "-o", log.path, try CrashChild.executable().path,
            ] + arguments
        process.standardOutput = out
        process.standardError = err
        try process.run()
    }

    /// Waits for the child to end, cleanly; a failure shows what it and strace said.
    /// - Returns: The lines the child printed.
    func finish(before deadline: ContinuousClock.Instant, sourceLocation: SourceLocation = #_sourceLocation) async throws -> [String] {
        while process.isRunning {
            if ContinuousClock.now >= deadline {
                sendKill(process.processIdentifier)
                process.waitUntilExit()
                Issue.record("\(arguments) under strace did not end in time: \(errorText)", sourceLocation: sourceLocation)
                throw CancellationError()
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        process.waitUntilExit()
        let said = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
        let problem =
            "\(arguments) under strace ended with status \(process.terminationStatus) (if strace says ptrace is not "
            + "permitted, this machine forbids tracing); it printed:\n\(said)\nstderr:\n\(errorText)"
        try #require(
            process.terminationReason == .exit && process.terminationStatus == 0 && said.hasSuffix("done\n"), "\(problem)",
            sourceLocation: sourceLocation)
        return said.split(separator: "\n").map(String.init)
    }

    var arguments: [String] { Array((process.arguments ?? []).drop { !$0.hasSuffix("folio-crash-child") }.dropFirst()) }
    var errorText: String { (try? String(contentsOf: errors, encoding: .utf8)) ?? "" }
}

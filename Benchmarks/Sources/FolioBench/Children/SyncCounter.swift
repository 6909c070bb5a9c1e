import Foundation

/// Counts the real sync syscalls (`fsync`, `fdatasync`, `sync_file_range`, `msync`, `syncfs`,
/// `sync`) a contender makes per transaction, the same way for Folio and SQLite: a child process
/// runs the transactions under `strace -f`, between marker syscalls (ChildMain.marker), and the
/// trace is read back. The figure that carries over to other hardware, where a sync costs
/// milliseconds.
enum SyncCounter {
    static let markerPrefix = "/folio-bench-marker/"
    static let traced = "fsync,fdatasync,sync_file_range,msync,syncfs,sync,access"
    /// The commits of the run without strace that measures a commit's cost: enough that the first
    /// ones (a new journal's first growth, cold caches) weigh little, as in an app that runs a while.
    static let costTransactions = 1000

    struct Count: Sendable {
        var engine: String
        var transactions: Int
        /// Syncs between the first and last commit, by file (the path strace shows).
        var commitSyncs: [String: Int]
        /// Syncs of the checkpoint after the commits, by file.
        var checkpointSyncs: [String: Int]
        /// Per transaction, in a second run without strace (``costTransactions`` commits): wall
        /// µs, CPU µs, voluntary and involuntary context switches.
        var cost: [Double] = []

        var perTransaction: Double { Double(commitSyncs.values.reduce(0, +)) / Double(transactions) }
        var checkpointPerTransaction: Double { Double(checkpointSyncs.values.reduce(0, +)) / Double(transactions) }
    }

    /// The path of strace, or nil if it is not installed.
    static var strace: String? {
        ["/usr/bin/strace", "/bin/strace", "/usr/local/bin/strace"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    static func count(engine: String, path: String, traceFile: String, seed: UInt64, todos: Int, transactions: Int) throws -> Count {
        guard let strace else { throw BenchError("strace is not installed (apt-get install strace)") }
        _ = try ChildProcess.run(
            ["syncs", engine, path, String(seed), String(todos), String(transactions)],
            wrapper: [strace, "-f", "--seccomp-bpf", "-qq", "-y", "-o", traceFile, "-e", "trace=" + traced])
        let trace = try String(contentsOfFile: traceFile, encoding: .utf8)
        var phase = 0
        var result = Count(engine: engine, transactions: transactions, commitSyncs: [:], checkpointSyncs: [:])
        for line in trace.split(separator: "\n") {
            if line.contains(markerPrefix + "begin") { phase = 1; continue }
            if line.contains(markerPrefix + "committed") { phase = 2; continue }
            if line.contains(markerPrefix + "end") { phase = 3; continue }
            guard phase == 1 || phase == 2, let file = syncedFile(line) else { continue }
            if phase == 1 { result.commitSyncs[file, default: 0] += 1 } else { result.checkpointSyncs[file, default: 0] += 1 }
        }
        guard phase == 3 else { throw BenchError("the trace of \(engine) lacks its markers (is ptrace allowed?)") }
        let plain = try ChildProcess.run(["syncs", engine, path + "-plain", String(seed), String(todos), String(max(transactions, costTransactions))])
        result.cost = try ChildProcess.numbers(plain, expected: 4)
        return result
    }

    /// The kind of file a sync line is about, or nil if the line is no sync. Lines look like
    /// `1234 fdatasync(5</tmp/x/.folio/journal>) = 0`; a resumed call (`<... fsync resumed>`) was
    /// counted when it started.
    private static func syncedFile(_ line: Substring) -> String? {
        let calls = ["fdatasync(", "fsync(", "sync_file_range(", "msync(", "syncfs(", "sync("]
        guard let call = calls.first(where: { line.contains($0) && !line.contains("resumed>") }) else { return nil }
        guard let open = line.range(of: call) else { return nil }
        let rest = line[open.upperBound...]
        let name = String(call.dropLast())
        guard let start = rest.firstIndex(of: "<"), let end = rest.firstIndex(of: ">"), start < end else { return name + " (?)" }
        return name + " " + category(String(rest[rest.index(after: start)..<end]))
    }

    /// A stable name for the file: what it is in the store, not the run's temp path. Folio
    /// writes every file it replaces (partition files, outbox commands, indexes) as a temp file
    /// in `.folio/tmp/`, synced before its rename, so those syncs show the temp path.
    private static func category(_ path: String) -> String {
        if path.hasSuffix("/.folio/journal") { return "journal" }
        if path.hasSuffix("-wal") { return "WAL" }
        if path.hasSuffix(".sqlite") { return "database file" }
        if path.contains("/.folio/tmp/") { return "replaced file" }
        let last = path.split(separator: "/").last.map(String.init) ?? path
        return last.contains(".") ? "other file" : "folder"
    }
}

import Foundation

/// The machine's floors that four targets are measured against (issue 29), each in the same run,
/// on the same disk (the run's scratch folder) and the same way as the row it bounds: the bulk
/// import's command files created bare (row 4), the drain's raw requests one by one (row 6, its
/// own contender), a bare overwrite + `fdatasync` (row 8), the system calls of the duplicate-id
/// guarantee in a cold process (row 10).
extension Runner {
    /// The command files of the bulk import with outbox, names and bytes as Folio writes them: an
    /// untimed import of `todos` with their commands into a store of its own, its `outbox/` read back.
    static func importCommandFiles(_ todos: [Todo], in scratch: URL) async throws -> [(name: String, bytes: [UInt8])] {
        let store = scratch.appendingPathComponent("command-files", isDirectory: true)
        _ = try await FolioContender.bulkImport(store, todos: todos, outbox: true)
        let outbox = store.appendingPathComponent("outbox", isDirectory: true)
        let names = try FileManager.default.contentsOfDirectory(atPath: outbox.path).filter { $0.hasSuffix(".json") }.sorted()
        let files = try names.map { name in
            (name: name, bytes: [UInt8](try Data(contentsOf: outbox.appendingPathComponent(name))))
        }
        guard files.count == todos.count else {
            throw BenchError("the bulk import with outbox left \(files.count) command files, expected \(todos.count)")
        }
        return files
    }

    /// Row 4's floor: milliseconds to create the import's command files bare in `folder` and make
    /// them durable with one `syncfs` (DiskLimits.createFiles), in this process as the import runs.
    func bulkOutboxFloor(in folder: URL) throws -> Double {
        let outbox = folder.appendingPathComponent("bulk-floor", isDirectory: true).appendingPathComponent("outbox", isDirectory: true)
        let elapsed = try DiskLimits.createFiles(outbox, files: commandFiles)
        let bytes = commandFiles.reduce(0) { $0 + $1.bytes.count }
        floorNotes[.bulkOutboxFloor] =
            "4: floor = the import's \(Format.count(commandFiles.count)) command files (\(Format.count(bytes / max(commandFiles.count, 1))) B "
            + "on average, Folio's own bytes) created bare in one folder: open(O_CREAT|O_EXCL) + write + close each, "
            + "then one syncfs (Folio's barrier on Linux: data and names) and fsync of the folder; Folio's value is the "
            + "import's commit + checkpoint."
        return elapsed.seconds * 1000
    }

    /// Row 8's floor, once: a child's cost of one bare overwrite + `fdatasync` in the folder of
    /// the sync counts (``SyncCounter/costTransactions`` of them, after a `sync`), as Folio's
    /// commits are measured. Run just before and just after Folio's commits; the mean of the two is
    /// the peer of the context switches per durable commit.
    func measureCommitFloor(in folder: URL) throws {
        let path = folder.appendingPathComponent("overwrite-floor-\(commitFloor.count + 1)", isDirectory: true).path
        commitFloor.append(
            try ChildProcess.numbers(ChildProcess.run(["floor", "overwrite", path, String(SyncCounter.costTransactions)]), expected: 4))
        floorNotes[.commitSwitches] =
            "8: floor = a child's \(Format.count(SyncCounter.costTransactions)) × (pwrite 256 B over preallocated bytes + fdatasync) "
            + "after a sync, in the same folder as the commits, just before and just after them (the mean of the two); switches "
            + "are voluntary + involuntary (getrusage), as for the commits."
    }

    /// Row 10's floor: milliseconds of the duplicate-id guarantee's system calls in a fresh child,
    /// caches dropped first as for the cold get; the calls counted are checked against the store.
    func idGuaranteeCalls(_ path: String, _ tenYears: Workload) throws -> Double {
        coldMethod = ColdCache.drop(path, allowDropCaches: options.dropCaches)
        let values = try ChildProcess.numbers(ChildProcess.run(["floor", "idcalls", path, Todo.collection]), expected: 4)
        let months = Set(tenYears.todosByDay.keys.map { $0.prefix(7) }).count
        let files = tenYears.todosByDay.count
        guard Int(values[1]) == 1 + months, Int(values[2]) == files else {
            throw BenchError(
                "the id guarantee's calls listed \(Int(values[1])) folders and stat'ed \(Int(values[2])) files, expected \(1 + months) and \(files)")
        }
        floorNotes[.tenYearColdGetFloor] =
            "10: floor = a fresh child, caches dropped, making the calls a fresh Folio process makes before it trusts its "
            + "saved id index: list \(Todo.collection)/ (1 opendir + readdir + closedir), list \(Format.count(months)) month folders "
            + "(the same each), stat \(Format.count(files)) day files; listings and stats on \(Int(values[3])) threads as Folio "
            + "does; Folio's get ÷ (GRDB's get + these calls), same round."
        return values[0] / 1e6
    }
}

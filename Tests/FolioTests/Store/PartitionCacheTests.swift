@testable import Folio
import FolioCrashSupport
import Foundation
import Testing

/// A day-partitioned collection that pushes without coalescing: every change is one command, so
/// "adopted exactly once" can be counted.
private struct Note: Entity, Equatable {
    static let collection = "notes"
    static let partitioning = Partitioning<Note>.day(\.day)
    static let syncMode = SyncMode.push

    var id: String
    var title: String
    var day: String
}

/// The partition cache (PartitionCache.swift) keeps memory within `partitionCacheBudget` without
/// changing what any read returns. The expectations come from a plain dictionary of what was
/// written (and saved by hand), never from Folio's state.
@Suite struct PartitionCacheTests {
    private static func day(_ index: Int) -> String {
        String(format: "2026-%02d-%02d", 1 + index / 28, 1 + index % 28)
    }

    private static func open(_ folder: TemporaryFolder, budget: Int) async throws -> Store {
        var configuration = Store.Configuration()
        configuration.partitionCacheBudget = budget
        configuration.checkpointDelay = .seconds(3600)
        configuration.durability = .relaxed
        return try await Store.open(at: folder.url, configuration: configuration)
    }

    /// Random writes, reads, queries, checkpoints, reopens and hand edits over 40 day files with a
    /// tiny budget: every read equals the model, the partitions that may leave stay within the
    /// budget after every read, and every change (hand edits included) queues exactly one command.
    @Test(arguments: [0, 3_000, 1 << 30])
    func readsMatchAModelWhateverTheBudget(budget: Int) async throws {
        // FOLIO_CACHE_SEED replays a seed.
        let seed = ProcessInfo.processInfo.environment["FOLIO_CACHE_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64(UInt32.max))
        var random = SplitMix64(seed: seed)
        let folder = TemporaryFolder()
        var store = try await Self.open(folder, budget: budget)
        var model: [String: Note] = [:]
        var commands = 0
        var expectedCommands: [String] = []
        var log: [String] = []
        var counter = 0
        var counts = (reads: 0, writes: 0, handEdits: 0, reopens: 0, maxOverBudget: 0)
        let days = 40
        let started = ContinuousClock.now

        func checkFootprint(_ context: String) async {
            let footprint = await store.cacheFootprint()
            let mayLeave = footprint.estimatedBytes - footprint.mustStayBytes
            counts.maxOverBudget = max(counts.maxOverBudget, mayLeave - budget)
            #expect(mayLeave <= budget, "seed \(seed), \(context): \(mayLeave) bytes that may leave, budget \(budget)")
        }

        for step in 0..<300 {
            counter += 1
            let existing = model.keys.sorted()
            switch random.next() % 10 {
            case 0, 1, 2:
                // Insert, or update (moving to another day at times).
                let id = existing.isEmpty || random.next() % 2 == 0 ? "n\(counter)" : existing[Int(random.next() % UInt64(existing.count))]
                let day =
                    model[id].map { random.next() % 3 == 0 ? Self.day(Int(random.next() % UInt64(days))) : $0.day }
                    ?? Self.day(Int(random.next() % UInt64(days)))
                let note = Note(id: id, title: "title \(counter)", day: day)
                try await store.write { tx in try tx.upsert(note) }
                model[id] = note
                commands += 1
                expectedCommands.append("upsert \(id)")
                log.append("upsert \(id) \(day)")
                counts.writes += 1
            case 3:
                guard let id = existing.randomElement(using: &random) else { continue }
                try await store.write { tx in _ = try tx.delete(Note.self, id: id) }
                model[id] = nil
                commands += 1
                expectedCommands.append("delete \(id)")
                log.append("delete \(id)")
                counts.writes += 1
            case 4:
                let id = existing.randomElement(using: &random) ?? "n0"
                #expect(try await store.get(Note.self, id: id) == model[id], "seed \(seed), step \(step): get \(id)")
                counts.reads += 1
                await checkFootprint("get")
            case 5:
                let day = Self.day(Int(random.next() % UInt64(days)))
                let expected = model.values.filter { $0.day == day }.sorted { $0.id.precedesInKeyOrder($1.id) }
                #expect(try await store.fetch(Query<Note>(.day(day))) == expected, "seed \(seed), step \(step): day \(day)")
                counts.reads += 1
                await checkFootprint("day")
            case 6:
                let digit = String(random.next() % 10)
                let query = Query<Note>(.all, where: #Predicate { $0.title.contains(digit) }, sortedBy: [SortDescriptor(\.title)])
                let expected = model.values.filter { $0.title.contains(digit) }.sorted { $0.title < $1.title }
                #expect(try await store.fetch(query) == expected, "seed \(seed), step \(step): all containing \(digit)")
                counts.reads += 1
                await checkFootprint("all")
            case 7:
                try await store.checkpoint()
                if random.next() % 3 == 0 {
                    try await store.close()
                    store = try await Self.open(folder, budget: budget)
                    counts.reopens += 1
                }
            case 8:
                // A hand edit of a checkpointed file, made while its partition may be evicted:
                // read back (adopted) and queued once.
                guard let id = existing.randomElement(using: &random), let note = model[id] else { continue }
                try await store.checkpoint()
                let path = "notes/\(note.day.prefix(7))/\(note.day).json"
                var file = try JSONSerialization.jsonObject(with: folder.bytes(path)) as! [String: Any]
                var entities = file["entities"] as! [String: Any]
                var entity = entities[id] as! [String: Any]
                entity["title"] = "edited \(counter)"
                entities[id] = entity
                file["entities"] = entities
                try JSONSerialization.data(withJSONObject: file, options: [.prettyPrinted, .sortedKeys]).write(to: folder.file(path), options: .atomic)
                model[id]!.title = "edited \(counter)"
                commands += 1
                expectedCommands.append("upsert \(id)")
                log.append("hand edit \(id) \(note.day)")
                counts.handEdits += 1
                #expect(try await store.get(Note.self, id: id) == model[id], "seed \(seed), step \(step): hand edit of \(id)")
                await checkFootprint("hand edit")
            default:
                let month = String(Self.day(Int(random.next() % UInt64(days))).prefix(7))
                let expected = model.values.filter { $0.day.hasPrefix(month) }.sorted { ($0.day, $0.id) < ($1.day, $1.id) }
                #expect(
                    try await store.fetch(Query<Note>(.month(month))).sorted { ($0.day, $0.id) < ($1.day, $1.id) } == expected,
                    "seed \(seed), step \(step): month \(month)")
                counts.reads += 1
                await checkFootprint("month")
            }
        }
        // Every change, hand edits included, queued exactly one command, also across reopens.
        let pending = try await store.pendingCommandCount()
        let queued = try await store.pendingCommands().map { "\($0.operation) \($0.entityID ?? "")" }
        if let first = zip(queued, expectedCommands).enumerated().first(where: { $0.element.0 != $0.element.1 }) {
            Issue.record(
                "seed \(seed): command \(first.offset) is \(first.element.0), expected \(first.element.1); around: \(queued[max(0, first.offset - 3)..<min(queued.count, first.offset + 4)]) vs \(expectedCommands[max(0, first.offset - 3)..<min(expectedCommands.count, first.offset + 4)]); \(log.prefix(first.offset + 2))"
            )
        }
        #expect(pending == commands, "seed \(seed): \(pending) commands, expected \(commands)")
        try await store.close()
        store = try await Self.open(folder, budget: budget)
        let pendingAfterReopening = try await store.pendingCommandCount()
        #expect(pendingAfterReopening == commands, "seed \(seed): \(pendingAfterReopening) commands after reopening, expected \(commands)")
        #expect(try await store.fetch(Query<Note>()).sorted { $0.id < $1.id } == model.values.sorted { $0.id < $1.id })
        let evictions = await store.cacheFootprint().evictions
        try await store.close()
        print(
            "partition cache: seed \(seed), budget \(budget), \(counts.reads) reads, \(counts.writes) writes, \(counts.handEdits) hand edits, \(counts.reopens) reopens, \(commands) commands, \(evictions) evictions after the last reopen, worst \(counts.maxOverBudget) bytes over budget, \(ContinuousClock.now - started)"
        )
    }

    /// The rules, one by one: what must stay stays whatever the budget, and the rest leaves.
    @Test func partitionsThatMustStayAreNeverEvicted() async throws {
        let folder = TemporaryFolder()
        let store = try await Self.open(folder, budget: 0)
        let paths = (0..<6).map { "notes/\(Self.day($0).prefix(7))/\(Self.day($0)).json" }
        try await store.write { tx in
            for index in 0..<6 { try tx.upsert(Note(id: "n\(index)", title: "t", day: Self.day(index))) }
        }
        // Uncheckpointed records: every touched partition stays.
        for index in 0..<6 { _ = try await store.fetch(Query<Note>(.day(Self.day(index)))) }
        #expect(await store.cacheFootprint().paths == Set(paths))
        // Checkpointed: nothing must stay, so a budget of 0 keeps nothing after a read.
        try await store.checkpoint()
        _ = try await store.fetch(Query<Note>(.day(Self.day(0))))
        #expect(await store.cacheFootprint().paths.isEmpty)

        // A file broken by hand after its partition left memory: the last good state this process
        // served comes back from the kept versions, is served, and stays.
        _ = try await store.fetch(Query<Note>(.day(Self.day(1))))
        _ = try await store.fetch(Query<Note>(.day(Self.day(2))))
        #expect(await store.cacheFootprint().paths.isEmpty)
        let good = try Data(contentsOf: folder.file(paths[1]))
        try Data("{ broken".utf8).write(to: folder.file(paths[1]))
        #expect(try await store.fetch(Query<Note>(.day(Self.day(1)))) == [Note(id: "n1", title: "t", day: Self.day(1))])
        #expect(await store.cacheFootprint().paths == [paths[1]], "the last good state of a broken file stays")
        _ = try await store.fetch(Query<Note>(.day(Self.day(2))))
        #expect(await store.cacheFootprint().paths == [paths[1]])
        #expect(try await store.unreadableFiles().map(\.path) == [paths[1]])
        // A file broken before this process ever read it has no good state: reads of it throw.
        let newDay = Self.day(7), newPath = "notes/\(Self.day(7).prefix(7))/\(Self.day(7)).json"
        try Data("{ broken".utf8).write(to: folder.file(newPath))
        await #expect(throws: FolioError.self) { try await store.fetch(Query<Note>(.day(newDay))) }
        try Data(#"{"entities": {"n7": {"day": "2026-01-08", "id": "n7", "title": "t"}}}"#.utf8).write(to: folder.file(newPath))
        #expect(try await store.fetch(Query<Note>(.day(newDay))).count == 1)
        // The fix keeps the file's revision (an editor's buffer of the good file, n1 removed).
        var fixed = try #require(try JSONSerialization.jsonObject(with: good) as? [String: Any])
        fixed["entities"] = [String: Any]()
        try JSONSerialization.data(withJSONObject: fixed).write(to: folder.file(paths[1]))
        #expect(try await store.fetch(Query<Note>(.day(Self.day(1)))) == [])
        // The fix is a hand edit (it deletes n1): adopted, it stays until a checkpoint writes it.
        #expect(await store.cacheFootprint().paths == [paths[1]])
        try await store.checkpoint()

        // Observed: every partition read stays while anyone observes, and may leave after.
        let changes = await store.changes()
        for index in 2..<6 { _ = try await store.fetch(Query<Note>(.day(Self.day(index)))) }
        #expect(await store.cacheFootprint().paths.isSuperset(of: Set(paths[2..<6])))
        _ = changes
        await store.stopTrackingChanges()
        _ = try await store.fetch(Query<Note>(.day(Self.day(0))))
        #expect(await store.cacheFootprint().paths.isEmpty)
        try await store.close()
    }

    /// The default budget keeps what was read: the second read of a day reads no file.
    @Test func aPartitionWithinTheBudgetIsNotReadAgain() async throws {
        let folder = TemporaryFolder()
        let reads = PathCounter()
        var configuration = Store.Configuration()
        configuration.partitionCacheBudget = Store.Configuration.defaultPartitionCacheBudget
        configuration.ioHook = { step in if case .read(let path) = step, path.hasPrefix("notes/") { reads.add(path) } }
        let store = try await Store.open(at: folder.url, configuration: configuration)
        try await store.write { tx in for index in 0..<30 { try tx.upsert(Note(id: "n\(index)", title: "t", day: Self.day(index))) } }
        try await store.checkpoint()
        _ = try await store.fetch(Query<Note>())
        let first = reads.count
        _ = try await store.fetch(Query<Note>())
        #expect(reads.count == first)
        try await store.close()
    }
}

/// The cache alone: least recently used first, never what must stay or the partition in use.
@Suite struct PartitionCacheUnitTests {
    private func partition(_ day: Int, entities: Int = 3) -> Partition {
        let key = PartitionKey.day(parsing: String(format: "2026-01-%02d", day))!
        let address = PartitionAddress(collection: "notes", granularity: .day, key: key)
        var json: [String: JSONValue] = [:]
        for index in 0..<entities { json["n\(day)-\(index)"] = .object(["title": .string("a title of some length")]) }
        let partition = Partition(address: address, identity: nil, contents: PartitionFile.Contents(entities: json, extra: [:]))
        partition.noteRead(fileHash: ContentHash(Array("day \(day)".utf8)), holdsMerge: false, unkeptFile: nil)
        return partition
    }

    @Test func evictsTheLeastRecentlyUsedThatMayLeave() {
        let parts = (1...6).map { partition($0) }
        let size = parts[0].estimatedBytes
        let cache = PartitionCache(budget: size * 4)   // day 1, which must stay, counts too
        var pinned: Set<PartitionAddress> = [parts[0].address]
        cache.mustStay = { pinned.contains($0.address) }
        var evicted: [Int] = []
        cache.onEvict = { evicted.append(Int($0.address.key.text.suffix(2))!) }
        for part in parts.prefix(4) { cache.insert(part) }
        #expect(evicted.isEmpty, "day 1 must stay; 2, 3, 4 fit the budget")
        _ = cache[parts[1].address]   // day 2 used again: day 3 is now the oldest that may leave
        cache.insert(parts[4])
        #expect(evicted == [3])
        #expect(cache.departed[parts[2].address] == parts[2].fileHash)
        cache.insert(parts[5])
        #expect(evicted == [3, 4])
        #expect(cache.estimatedBytes - cache.mustStayBytes <= size * 3)
        // What must stay stays, even at a budget of 0; the partition just inserted too.
        cache.budget = 0
        cache.insert(parts[2])
        #expect(Set(cache.addresses) == [parts[0].address, parts[2].address])
        #expect(cache.departed[parts[2].address] == nil, "cached again")
        cache.trim()
        #expect(cache.addresses == [parts[0].address])
        pinned = []
        cache.trim()
        #expect(cache.count == 0)
        #expect(cache.evictions == 7)
    }

    @Test func theEstimateFollowsTheEntities() {
        let part = partition(1, entities: 10)
        let before = part.estimatedBytes
        part.apply(JournalRecord.Change(address: part.address, id: "n1-0", entity: nil, version: nil))
        #expect(part.estimatedBytes < before)
        part.resetToBase()
        #expect(part.estimatedBytes == before)
        #expect(partition(1, entities: 100).estimatedBytes > before * 5)
    }
}

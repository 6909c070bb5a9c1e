@testable import Folio
import FolioTestServer
import Foundation
import Testing

/// What a drain reads from disk: each command file once, however many steps look at the command
/// (the head of the queue, the sent mark, the acknowledgement, the entity's later commands) and
/// whether the next window was read ahead while the server worked (Outbox/CommandFileCache.swift,
/// Sync/Store+ReadAhead.swift). A drain used to read each file about five times.
@Suite struct DrainFileReadsTests {
    @Test(arguments: [1, 100])
    func aDrainReadsEachCommandFileOnce(batchSize: Int) async throws {
        let folder = TemporaryFolder()
        let reads = PathCounter()
        var storeConfiguration = Store.Configuration.testing()
        storeConfiguration.ioHook = { step in
            if case .read(let path) = step, path.hasPrefix("outbox/"), CommandFileName.sequence(fromFileName: String(path.dropFirst(7))) != nil {
                reads.add(path)
            }
        }
        let store = try await Store.open(at: folder.url, configuration: storeConfiguration)
        // 250 commands: windows of 100, 100 and 50, so the last read-ahead finds fewer commands.
        try await store.write { tx in
            for index in 0..<250 { try tx.upsert(todo("todo \(index)", on: "2026-11-\(10 + index % 20)")) }
        }
        try await store.checkpoint()
        reads.reset()

        let server = try TestServer()
        defer { server.stop() }
        var options = HTTPTransport.Options()
        options.batchSize = batchSize
        options.requestTimeout = .seconds(5)
        let engine = SyncEngine(
            store: store, transport: HTTPTransport(baseURL: server.baseURL, options: options), configuration: .testing)
        let report = try await engine.drainNow()
        await engine.stop()

        #expect(report.sent == 250 && report.remaining == 0)
        #expect(try await store.pendingCommandCount() == 0)
        #expect(server.maxAppliedCountPerKey == 1, "every command applied once")
        let counts = Dictionary(reads.all.map { ($0, 1) }, uniquingKeysWith: +)
        #expect(counts.count == 250, "every command's file read")
        #expect(counts.values.allSatisfy { $0 == 1 }, "read more than once: \(counts.filter { $0.value > 1 }.keys.sorted().prefix(5))")
        try await store.close()
    }
}

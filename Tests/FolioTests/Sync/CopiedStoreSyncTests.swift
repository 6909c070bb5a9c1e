@testable import Folio
import FolioTestServer
import Foundation
import Testing

/// Every folder instance is its own writer (issue 25, "Found" 4): copies of one store made with
/// `cp -a`, `rsync -a`, and as `git clone` makes them (the data files and `folio.json`, without
/// `.folio/`), each written by the app and each syncing to one server, get every change of each
/// copy to the server exactly once: no idempotency key is used for two different commands (the
/// server would answer 422 and the command would be dead-lettered), and the commands pending when
/// the copies were made keep their keys (they may have been sent; each copy sends them again and
/// the server answers from memory).
@Suite struct CopiedStoreSyncTests {
    @Test func copiesOfAStoreSendEveryChangeOnceUnderKeysOfTheirOwn() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let root = TemporaryFolder("copies")
        let original = root.url.appendingPathComponent("original")
        var titles: [String] = []

        // The original: three todos synced, two more pending when it is copied.
        let store = try await Store.open(at: original, configuration: .testing())
        for index in 0..<5 {
            let item = todo("original \(index)", on: "2026-11-2\(index)")
            try await store.write { tx in try tx.upsert(item) }
            titles.append(item.title)
            if index == 2 { try await drain(store, server) }
        }
        try await store.close()

        // The copies, made of the closed folder as people make them.
        var copies = [("original", original)]
        let viaCp = root.url.appendingPathComponent("cp")
        try LiveCopyToolsTests.run(try Tools.require("cp"), ["-a", original.path, viaCp.path])
        copies.append(("cp -a", viaCp))
        // rsync is one copy among four: without it the others still run, and the summary says so.
        if Tools.runs("rsync") {
            let viaRsync = root.url.appendingPathComponent("rsync")
            try LiveCopyToolsTests.run(try Tools.require("rsync"), ["-a", original.path + "/", viaRsync.path + "/"])
            copies.append(("rsync -a", viaRsync))
        } else {
            print("CopiedStoreSyncTests: the rsync copy did not run: rsync is not installed (\(Tools.install("rsync")))")
        }
        let asCloned = root.url.appendingPathComponent("clone")
        try FileManager.default.copyItem(at: original, to: asCloned)
        try FileManager.default.removeItem(at: asCloned.appendingPathComponent(".folio"))
        copies.append(("clone without .folio", asCloned))

        // Each writes new todos of its own, then syncs.
        var prefixes: [String: String] = [:]
        for (name, folder) in copies {
            let copy = try await Store.open(at: folder, configuration: .testing())
            for index in 0..<4 {
                let item = todo("\(name) \(index)", on: "2026-12-0\(index + 1)")
                try await copy.write { tx in try tx.upsert(item) }
                titles.append(item.title)
            }
            let new = try await copy.pendingCommands().suffix(4)
            prefixes[name] = new.first.map { String($0.id.dropLast(21)) }
            try await drain(copy, server)
            #expect(try await copy.pendingCommandCount() == 0, "\(name): commands still pending")
            let failed = try await copy.failedCommands()
            #expect(failed.isEmpty, "\(name): \(failed.map { "\($0.command.id): \($0.reason)" })")
            try await copy.close()
        }

        let onServer = server.entities("todos").values.compactMap { try? SyncHarness.decoder.decode(Todo.self, from: $0.json).title }
        #expect(onServer.sorted() == titles.sorted(), "the server lacks \(Set(titles).subtracting(onServer).sorted())")
        #expect(server.maxAppliedCountPerKey == 1)
        #expect(Set(prefixes.values).count == copies.count, "two copies share a key prefix: \(prefixes)")
        print(
            "copied stores: \(copies.count) folders (\(copies.map(\.0).joined(separator: ", "))), "
                + "\(titles.count) todos, \(onServer.count) on the server, \(server.pushes.count) pushes, "
                + "\(server.appliedLog.count) applied, \(Set(prefixes.values).count) key prefixes")
    }

    private func drain(_ store: Store, _ server: TestServer) async throws {
        var options = HTTPTransport.Options()
        options.requestTimeout = .seconds(5)
        let engine = SyncEngine(store: store, transport: HTTPTransport(baseURL: server.baseURL, options: options), configuration: .testing)
        for _ in 0..<20 {
            let report = try await engine.drainNow()
            if report.remaining == 0 && report.stoppedBecause == nil { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        await engine.stop()
    }
}

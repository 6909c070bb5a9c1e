// folio-client-child: one client of the multi-client convergence test
// (FolioTests/Sync/MultiClientConvergenceTests.swift). Dependency-free apart from Folio.
//
//   folio-client-child apply DIR OPS-FILE
//   folio-client-child sync DIR BASE-URL [--push-only] [--batch N] [--max-seconds N]
//
// `apply` opens the store in DIR and runs each transaction of OPS-FILE (a JSON array of
// transactions, each an array of operations, see `ClientOperation.swift`) as one `store.write`, then
// prints `applied T missing M` (M: operations whose entity was not in the store) and exits 0.
//
// `sync` drains the outbox to BASE-URL (PROTOCOL.md) until it is empty (up to --batch commands per
// request, default 1), then pulls the change feed of each collection (not with --push-only), prints
// `state <JSON>` (every entity by collection and id, and the outbox's pending and failed commands)
// and exits 0. The test SIGKILLs it at random instants and starts it again.
//
// Exit status: 1 an error it cannot retry, 2 usage, 3 out of time (--max-seconds, default 60),
// so a test that crashed leaves nothing running.

import Folio
import Foundation

func fail(_ status: Int32, _ message: String) -> Never {
    FileHandle.standardError.write(Data("folio-client-child: \(message)\n".utf8))
    exit(status)
}

let arguments = CommandLine.arguments
guard arguments.count >= 4 else {
    fail(2, "usage: folio-client-child apply DIR OPS-FILE | sync DIR BASE-URL [--push-only] [--max-seconds N]")
}
let folder = URL(fileURLWithPath: arguments[2])
var maxSeconds = 60.0
if let index = arguments.firstIndex(of: "--max-seconds"), index + 1 < arguments.count, let value = Double(arguments[index + 1]) {
    maxSeconds = value
}
let deadline = ContinuousClock.now + .seconds(maxSeconds)

do {
    switch arguments[1] {
    case "apply":
        let transactions = try ClientOperation.transactions(from: Data(contentsOf: URL(fileURLWithPath: arguments[3])))
        let store = try await Store.open(at: folder)
        var missing = 0
        for operations in transactions {
            missing += try await store.write { tx in
                var missing = 0
                for operation in operations where try !operation.apply(in: tx) { missing += 1 }
                return missing
            }
        }
        try await store.close()
        print("applied \(transactions.count) missing \(missing)")
    case "sync":
        guard let base = URL(string: arguments[3]) else { fail(2, "not a URL: \(arguments[3])") }
        var sync = ClientSync(folder: folder, base: base, deadline: deadline)
        if let index = arguments.firstIndex(of: "--batch"), index + 1 < arguments.count, let size = Int(arguments[index + 1]) {
            sync.batchSize = size
        }
        let state = try await sync.run(pull: !arguments.contains("--push-only"))
        print("state " + state)
    default:
        fail(2, "unknown mode \(arguments[1])")
    }
    exit(0)
} catch let timeout as OutOfTime {
    fail(3, timeout.description)
} catch {
    fail(1, "\(error)")
}

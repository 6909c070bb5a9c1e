// folio: the command line tool for Folio store folders. A thin shell over the library's public
// API (Store.verify(at:), Store.status(at:verify:pendingLimit:), Store.recover(at:), the outbox
// API, SyncEngine, Store.backup(to:)); docs/CLI.md describes it.

import Foundation

let code = await CommandLineTool.run(Array(CommandLine.arguments.dropFirst()))
exit(code)

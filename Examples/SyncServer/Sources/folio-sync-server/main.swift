import Foundation
import FolioSyncServer

// folio-sync-server: see `Options.usage`. Exit status 0 after a clean stop, 1 when the server
// fails, 2 for a command line mistake.

func standardError(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}

let options: Options
do {
    options = try Options(Array(CommandLine.arguments.dropFirst()))
} catch {
    standardError("folio-sync-server: \(error)\n\n\(Options.usage)")
    exit(2)
}
if options.showHelp {
    print(Options.usage)
    exit(0)
}

do {
    try StopSignals.install()
    let server = try await SyncServer.start(options.configuration)
    // Written straight to the file descriptor, unbuffered: scripts wait for this line.
    FileHandle.standardOutput.write(Data("listening on \(server.baseURL.absoluteString)\n".utf8))
    Task {
        await StopSignals.wait()
        await server.requestStop()
    }
    try await server.waitUntilStopped()
    let place = options.configuration.postgres.map { "\($0)" } ?? options.configuration.dataFolder.path
    standardError("folio-sync-server: stopped; data in \(place)")
} catch {
    standardError("folio-sync-server: \(error)")
    exit(1)
}

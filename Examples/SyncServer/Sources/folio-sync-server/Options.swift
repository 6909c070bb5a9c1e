import Foundation
import FolioSyncServer

/// The command line: `folio-sync-server [--port 8080] [--data ./ServerData] [--token SECRET]
/// [--remember-days 7] [--page-size 500]`.
struct Options {
    static let usage = """
        USAGE: folio-sync-server [--port <port>] [--data <folder>] [--token <secret>]
                                 [--remember-days <days>] [--page-size <count>]

        The reference Folio sync server (PROTOCOL.md) on http://127.0.0.1:<port>/api/,
        keeping its data in a Folio folder. It listens on 127.0.0.1 only. When ready it
        prints one line, "listening on http://127.0.0.1:<port>/api/", to standard output;
        everything else goes to standard error. SIGINT or SIGTERM stop it cleanly.

        OPTIONS:
          --port <port>           The TCP port; 0 picks a free one (default: 8080).
          --data <folder>         The server's Folio data folder, created if missing
                                  (default: ./ServerData).
          --token <secret>        Require "Authorization: Bearer <secret>" on every request.
          --remember-days <days>  Remember each push's response by its Idempotency-Key for at
                                  least this many days (default: 7).
          --page-size <count>     The most changes per "?since=" answer (default: 500).
          -h, --help              Show this help.

        Log level: LOG_LEVEL=trace|debug|info|notice|warning|error (default: warning).
        """

    var configuration: SyncServer.Configuration
    var showHelp = false

    /// Parses the arguments (without the program's name).
    /// - Throws: ``OptionError`` naming the option.
    init(_ arguments: [String]) throws(OptionError) {
        configuration = SyncServer.Configuration(dataFolder: URL(fileURLWithPath: "ServerData"))
        var remaining = arguments[...]
        func value(for option: String) throws(OptionError) -> String {
            guard let value = remaining.popFirst(), !value.hasPrefix("--") else { throw OptionError("\(option) needs a value") }
            return value
        }
        func number(for option: String, in range: ClosedRange<Int>) throws(OptionError) -> Int {
            let text = try value(for: option)
            guard let number = Int(text), range.contains(number) else {
                throw OptionError("\(option) takes a number from \(range.lowerBound) to \(range.upperBound), not \(text)")
            }
            return number
        }
        while let argument = remaining.popFirst() {
            switch argument {
            case "-h", "--help": showHelp = true
            case "--port": configuration.port = try number(for: argument, in: 0...65_535)
            case "--data":
                let path = try value(for: argument)
                guard !path.isEmpty else { throw OptionError("--data needs a folder") }
                configuration.dataFolder = URL(fileURLWithPath: path)
            case "--token":
                let token = try value(for: argument)
                guard !token.isEmpty else { throw OptionError("--token needs a non-empty secret") }
                configuration.token = token
            case "--remember-days": configuration.rememberKeysForDays = try number(for: argument, in: 1...3_650)
            case "--page-size": configuration.changesPageSize = try number(for: argument, in: 1...100_000)
            default: throw OptionError("unknown option \(argument)")
            }
        }
    }
}

/// A command line mistake.
struct OptionError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

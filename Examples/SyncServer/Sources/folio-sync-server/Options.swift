import Foundation
import FolioSyncServer

/// The command line: `folio-sync-server [--port 8080] [--data ./ServerData | --postgres [URL]]
/// [--token SECRET | --tokens FILE] [--pool-size 10] [--isolation read-committed]
/// [--remember-days 7] [--page-size 500]`.
struct Options {
    static let usage = """
        USAGE: folio-sync-server [--port <port>] [--data <folder> | --postgres [<url>]]
                                 [--token <secret> | --tokens <file>] [--pool-size <count>]
                                 [--isolation read-committed|serializable]
                                 [--remember-days <days>] [--page-size <count>]

        The reference Folio sync server (PROTOCOL.md) on http://127.0.0.1:<port>/api/,
        keeping its data in a Folio folder or in PostgreSQL. It listens on 127.0.0.1 only.
        When ready it prints one line, "listening on http://127.0.0.1:<port>/api/", to
        standard output; everything else goes to standard error. SIGINT or SIGTERM stop it
        cleanly. GET /health and GET /ready answer without a token.

        OPTIONS:
          --port <port>           The TCP port; 0 picks a free one (default: 8080).
          --data <folder>         The server's Folio data folder, created if missing
                                  (default: ./ServerData).
          --postgres [<url>]      Keep the data in PostgreSQL instead: postgres://user:password@
                                  host:port/database?sslmode=disable (a socket folder as
                                  ?host=/path). What the URL leaves out, or all of it without a
                                  URL, comes from PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE
                                  and PGSSLMODE. Any number of servers may share one database.
          --token <secret>        Require "Authorization: Bearer <secret>" on every request.
          --tokens <file>         Tokens by owner, one "<owner> <token>" per line: each owner's
                                  data is apart from every other's.
          --pool-size <count>     The most PostgreSQL connections (default: 10).
          --isolation <level>     read-committed (default) or serializable (as CockroachDB runs).
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
        var seen: Set<String> = []
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
            case "--postgres":
                var url: String?
                if let next = remaining.first, !next.hasPrefix("--") { url = remaining.popFirst() }
                do {
                    configuration.postgres = try PostgresSettings(url: url)
                } catch {
                    throw OptionError("--postgres: \(error)")
                }
            case "--tokens":
                let path = try value(for: argument)
                do {
                    configuration.ownerTokens = try OwnerTokens.read(URL(fileURLWithPath: path))
                } catch {
                    throw OptionError("--tokens: \(error)")
                }
            case "--pool-size": configuration.postgresPoolSize = try number(for: argument, in: 1...1_000)
            case "--isolation":
                let text = try value(for: argument)
                guard let isolation = SyncServer.PostgresIsolation(rawValue: text) else {
                    throw OptionError("--isolation is read-committed or serializable, not \(text)")
                }
                configuration.postgresIsolation = isolation
            case "--remember-days": configuration.rememberKeysForDays = try number(for: argument, in: 1...3_650)
            case "--page-size": configuration.changesPageSize = try number(for: argument, in: 1...100_000)
            default: throw OptionError("unknown option \(argument)")
            }
            seen.insert(argument)
        }
        if seen.contains("--token") && seen.contains("--tokens") { throw OptionError("give --token or --tokens, not both") }
        if seen.contains("--data") && seen.contains("--postgres") { throw OptionError("give --data or --postgres, not both") }
    }
}

/// A command line mistake.
struct OptionError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

public import Foundation

/// Where the PostgreSQL storage connects, from a URL and the usual `PG*` environment, as libpq
/// reads them: `postgres://user:password@host:port/database?sslmode=disable`, a Unix socket
/// folder as the host (`postgres://user@/database?host=/run/postgresql`, or `PGHOST=/run/…`).
///
/// What the URL leaves out comes from `PGHOST`, `PGPORT`, `PGUSER`, `PGPASSWORD`, `PGDATABASE`
/// and `PGSSLMODE`; then `localhost`, 5432, the user `postgres`, a database of the user's name,
/// and `prefer`. Its ``description`` never shows the password.
public struct PostgresSettings: Sendable, Equatable, CustomStringConvertible {
    /// How to use TLS, as libpq's `sslmode`.
    public enum TLSMode: String, Sendable {
        /// Plain TCP (the right choice for a Unix socket or 127.0.0.1).
        case disable
        /// TLS when the server offers it.
        case prefer
        /// TLS or no connection.
        case require
    }

    /// A host name or address, or a Unix socket folder (a path starting with `/`).
    public var host: String
    public var port: Int
    public var user: String
    public var password: String?
    public var database: String
    public var tls: TLSMode

    /// Whether ``host`` is a Unix socket folder.
    public var usesUnixSocket: Bool { host.hasPrefix("/") }
    /// The Unix socket's path, `<folder>/.s.PGSQL.<port>`.
    public var unixSocketPath: String { host + "/.s.PGSQL.\(port)" }

    /// Reads a connection URL, filling what it leaves out from the environment.
    /// - Parameters:
    ///   - url: `postgres://…` or `postgresql://…`; nil to take everything from the environment.
    ///   - environment: The `PG*` variables (the process's by default).
    /// - Throws: ``PostgresSettingsError`` naming what is wrong (never the password).
    public init(url: String?, environment: [String: String] = ProcessInfo.processInfo.environment) throws(PostgresSettingsError) {
        var host = environment["PGHOST"].flatMap { $0.isEmpty ? nil : $0 }
        var port = environment["PGPORT"].flatMap { $0.isEmpty ? nil : $0 }
        var user = environment["PGUSER"].flatMap { $0.isEmpty ? nil : $0 }
        var password = environment["PGPASSWORD"]
        var database = environment["PGDATABASE"].flatMap { $0.isEmpty ? nil : $0 }
        var sslmode = environment["PGSSLMODE"].flatMap { $0.isEmpty ? nil : $0 }
        if let url {
            guard let components = URLComponents(string: url), components.scheme == "postgres" || components.scheme == "postgresql" else {
                throw PostgresSettingsError("a PostgreSQL URL reads postgres://user:password@host:port/database")
            }
            if let value = components.host, !value.isEmpty { host = value.removingPercentEncoding ?? value }
            if let value = components.port { port = String(value) }
            if let value = components.user, !value.isEmpty { user = value.removingPercentEncoding ?? value }
            if let value = components.password { password = value.removingPercentEncoding ?? value }
            let path = String(components.path.drop(while: { $0 == "/" }))
            if !path.isEmpty { database = path.removingPercentEncoding ?? path }
            for item in components.queryItems ?? [] {
                switch item.name {
                case "host": host = item.value
                case "port": port = item.value
                case "user": user = item.value
                case "password": password = item.value
                case "dbname": database = item.value
                case "sslmode": sslmode = item.value
                default:
                    throw PostgresSettingsError(
                        "the PostgreSQL URL's parameter \(item.name) is not one this server reads (host, port, user, password, dbname, sslmode)")
                }
            }
        }
        self.host = host ?? "localhost"
        guard let number = Int(port ?? "5432"), (1...65_535).contains(number) else {
            throw PostgresSettingsError("the PostgreSQL port is a number from 1 to 65535, not \(port ?? "")")
        }
        self.port = number
        self.user = user ?? "postgres"
        self.password = password
        self.database = database ?? self.user
        switch sslmode ?? "prefer" {
        case "disable", "allow": tls = .disable
        case "prefer": tls = .prefer
        case "require", "verify-ca", "verify-full": tls = .require
        default: throw PostgresSettingsError("sslmode is disable, prefer or require, not \(sslmode ?? "")")
        }
    }

    /// The settings as a URL with the password masked: safe to print and log.
    public var description: String {
        let credentials = user + (password == nil ? "" : ":***")
        if usesUnixSocket { return "postgres://\(credentials)@/\(database)?host=\(host)&port=\(port)" }
        return "postgres://\(credentials)@\(host):\(port)/\(database)?sslmode=\(tls.rawValue)"
    }
}

/// A PostgreSQL URL or environment that cannot be used; never shows the password.
public struct PostgresSettingsError: Error, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}

import FolioSyncServer
import Foundation
import Testing

/// A throwaway PostgreSQL for the tests: the cluster `.ci/run` started (`FOLIO_TEST_PGHOST`, a
/// Unix socket folder), or else one this test process starts itself from Debian's binaries, on
/// a Unix socket only, with `fsync=off`, and stops when the process ends (a watchdog stops it
/// even after a SIGKILL). Every test gets a database of its own.
///
/// Without PostgreSQL's binaries, the tests that need it are reported as not run, by name, with
/// the command that installs it; with `FOLIO_REQUIRE_TOOLS=1` (set by `.ci/run`) they run and fail.
actor TestPostgres {
    static let shared = TestPostgres()

    /// Whether a missing PostgreSQL is a failure (CI), not tests that do not run.
    static let required = ProcessInfo.processInfo.environment["FOLIO_REQUIRE_TOOLS"] == "1"
    /// The socket folder of a cluster started outside the tests.
    static let externalHost = ProcessInfo.processInfo.environment["FOLIO_TEST_PGHOST"].flatMap { $0.isEmpty ? nil : $0 }
    static let user = "folio"

    /// The folder of `initdb`, `pg_ctl` and `createdb`: `FOLIO_TEST_PGBIN`, or the newest
    /// `/usr/lib/postgresql/<version>/bin`.
    static let binaries: String? = {
        let fileManager = FileManager.default
        if let folder = ProcessInfo.processInfo.environment["FOLIO_TEST_PGBIN"], fileManager.isExecutableFile(atPath: folder + "/createdb") {
            return folder
        }
        let versions = (try? fileManager.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        let newest = versions.compactMap(Int.init).sorted().last
        return newest.map { "/usr/lib/postgresql/\($0)/bin" }.flatMap { fileManager.isExecutableFile(atPath: $0 + "/initdb") ? $0 : nil }
    }()

    /// Whether the PostgreSQL tests run: the binaries are here, or their absence must fail.
    static var runs: Bool { required || binaries != nil }
    static let notRunReason: Comment = "needs PostgreSQL's server binaries (apt-get install postgresql); FOLIO_REQUIRE_TOOLS=1 makes their absence a failure"

    private var host: String?
    private var databases = 0

    /// A new, empty database.
    /// - Returns: Settings for the server (a Unix socket, no password, no TLS).
    func database() async throws -> PostgresSettings {
        let host = try await cluster()
        databases += 1
        let name = "folio_test_\(ProcessInfo.processInfo.processIdentifier)_\(databases)"
        let bin = try #require(Self.binaries, "PostgreSQL is not installed (FOLIO_REQUIRE_TOOLS=1): apt-get install postgresql")
        try Self.run(bin + "/createdb", ["-h", host, "-U", Self.user, name], asPostgres: false)
        return try PostgresSettings(url: "postgres://\(Self.user)@/\(name)?host=\(host)&sslmode=disable", environment: [:])
    }

    /// Runs SQL with `psql` and returns what it printed (unaligned, tuples only).
    nonisolated func sql(_ statement: String, in settings: PostgresSettings) throws -> String {
        let bin = try #require(Self.binaries, "PostgreSQL is not installed (FOLIO_REQUIRE_TOOLS=1): apt-get install postgresql")
        return try Self.run(
            bin + "/psql",
            [
                "-h", settings.host, "-p", String(settings.port), "-U", settings.user, "-d", settings.database,
                "-v", "ON_ERROR_STOP=1", "-At", "-c", statement,
            ], asPostgres: false
        )
        .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The cluster's socket folder, started on first use.
    private func cluster() async throws -> String {
        if let host { return host }
        if let external = Self.externalHost {
            host = external
            return external
        }
        let bin = try #require(Self.binaries, "PostgreSQL is not installed (FOLIO_REQUIRE_TOOLS=1): apt-get install postgresql")
        // Short: a Unix socket path is limited to about 107 bytes.
        let folder = "/tmp/fpg-\(ProcessInfo.processInfo.processIdentifier)-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        let asRoot = getuid() == 0
        if asRoot { try Self.run("/bin/chown", ["postgres:", folder], asPostgres: false) }
        try Self.run(bin + "/initdb", ["-D", folder + "/data", "-U", Self.user, "--auth=trust", "-E", "UTF8", "--no-sync"], asPostgres: asRoot)
        try Self.run(
            bin + "/pg_ctl",
            [
                "-D", folder + "/data", "-l", folder + "/log", "-w", "start", "-o",
                "-c listen_addresses='' -k \(folder) -c fsync=off -c max_connections=300",
            ], asPostgres: asRoot)
        // Stops the cluster when this process ends, however it ends.
        let stop = (asRoot ? "runuser -u postgres -- " : "") + "\(bin)/pg_ctl -D \(folder)/data -m immediate -w stop"
        let watchdog = Process()
        watchdog.executableURL = URL(fileURLWithPath: "/bin/sh")
        watchdog.arguments = [
            "-c", "while kill -0 \(ProcessInfo.processInfo.processIdentifier) 2>/dev/null; do sleep 1; done; \(stop) >/dev/null 2>&1; rm -rf \(folder)",
        ]
        watchdog.standardOutput = FileHandle.nullDevice
        watchdog.standardError = FileHandle.nullDevice
        try watchdog.run()
        host = folder
        return folder
    }

    /// Runs a PostgreSQL program to its end (as the `postgres` user when we are root: initdb
    /// refuses root); throws with its output when it fails.
    @discardableResult
    private static func run(_ program: String, _ arguments: [String], asPostgres: Bool) throws -> String {
        // Through a shell that closes every descriptor above 2 first: Foundation's Process
        // learns that its child ended when a socket the child inherits closes, and the server
        // pg_ctl starts would inherit it too and keep it open for its whole life.
        let closeInherited = #"for fd in /proc/$$/fd/*; do n=${fd##*/}; if [ "$n" -gt 2 ]; then eval "exec $n>&-"; fi; done; exec "$@""#
        let command = asPostgres ? ["/usr/sbin/runuser", "-u", "postgres", "--", program] + arguments : [program] + arguments
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")   // dash takes one-digit descriptors only
        process.arguments = ["-c", closeInherited, "bash"] + command
        // A file, not a pipe: the server pg_ctl starts keeps its descriptors, and a pipe would
        // never reach its end.
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("folio-pg-\(UUID().uuidString).log")
        FileManager.default.createFile(atPath: log.path, contents: nil)
        let output = try FileHandle(forWritingTo: log)
        defer {
            try? output.close()
            try? FileManager.default.removeItem(at: log)
        }
        process.standardOutput = output
        process.standardError = output
        try process.run()
        process.waitUntilExit()
        let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        guard process.terminationStatus == 0 else {
            throw TestPostgresError(description: "\(program) \(arguments.joined(separator: " ")) exited with \(process.terminationStatus): \(text)")
        }
        return text
    }
}

struct TestPostgresError: Error, CustomStringConvertible {
    var description: String
}

/// The storages a test runs against.
enum TestStorage: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case folder
    case postgres

    var testDescription: String { rawValue }
}

extension PostgresSettings {
    /// The settings as a `--postgres` URL (test databases have no password).
    var urlForTests: String { "postgres://\(user)@/\(database)?host=\(host)&port=\(port)&sslmode=disable" }
}

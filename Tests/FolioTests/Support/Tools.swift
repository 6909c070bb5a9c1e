import Foundation
import Testing

/// The tools tests drive as people do (rsync, git, vim, unison, strace…). On a machine without
/// one, a test that needs it is reported as not run, by name, with the command that installs it
/// (Swift Testing shows the comment of `.enabled(if:)`), so `swift test` passes on a fresh machine
/// with only the toolchain and python3. With `FOLIO_REQUIRE_TOOLS=1`, which `.ci/run` sets after
/// installing them, the test runs and fails on the missing tool: CI skips nothing.
enum Tools {
    /// Whether a missing tool is a failure (CI), not a test that does not run.
    static let required = ProcessInfo.processInfo.environment["FOLIO_REQUIRE_TOOLS"] == "1"

    /// The Debian package of each tool whose name differs from its package's.
    private static let packages = [
        "python3": "python3", "strace": "strace", "git": "git", "vim": "vim",
        "nano": "nano", "emacs": "emacs-nox", "unison": "unison", "rsync": "rsync",
        "tmux": "tmux",
    ]

    /// The tool's path on this machine, from `PATH` and the usual folders.
    static func path(_ name: String) -> String? {
        let folders =
            (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
            + ["/usr/bin", "/bin", "/usr/local/bin"]
        return folders.map { $0 + "/" + name }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Whether a test that needs these tools runs: they are all installed, or a missing one is to
    /// fail it (`FOLIO_REQUIRE_TOOLS=1`).
    static func runs(_ names: String...) -> Bool {
        required || names.allSatisfy { path($0) != nil }
    }

    /// How to install a tool, for the reports.
    static func install(_ name: String) -> String {
        "apt-get install \(packages[name] ?? name)"
    }

    /// The tool's path, or a failure that names it and how to install it (the test runs only when
    /// ``runs(_:)`` said so: the tool is there, or its absence must fail).
    static func require(_ name: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        try #require(path(name), "\(name) is not installed (FOLIO_REQUIRE_TOOLS=1): \(install(name))", sourceLocation: sourceLocation)
    }
}

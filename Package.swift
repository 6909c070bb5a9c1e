// swift-tools-version: 6.0
import PackageDescription

// Folio has no package dependencies, on purpose: apps embed it without pulling anything else in.
// Benchmarks/ and Examples/SyncServer/ are separate packages and may depend on others.
let package = Package(
    name: "Folio",
    platforms: [.macOS(.v14), .iOS(.v17), .tvOS(.v17), .watchOS(.v10), .visionOS(.v1)],
    products: [
        .library(name: "Folio", targets: ["Folio"]),
        // The command line tool: `swift run folio verify DIR` (docs/CLI.md).
        .executable(name: "folio", targets: ["FolioCLI"]),
        // A dependency-free PROTOCOL.md server with fault injection, for testing an app's sync
        // against a real HTTP server on 127.0.0.1 (and for Benchmarks/).
        .library(name: "FolioTestServer", targets: ["FolioTestServer"]),
        // What crash and fault tests share (SplitMix64, the crash children's protocol), for the
        // reference server's tests too. Not for apps.
        .library(name: "FolioCrashSupport", targets: ["FolioCrashSupport"]),
        // PROTOCOL.md's conformance suite, as a library and as `folio-conformance <base-url>`.
        .library(name: "FolioConformance", targets: ["FolioConformance"]),
        .executable(name: "folio-conformance", targets: ["folio-conformance"]),
    ],
    targets: [
        .target(name: "Folio"),
        // `folio`: status, verify, recover, outbox, drain, backup; a thin shell over the library's
        // public API (Sources/Folio/Maintenance). Not named `folio`: that would collide with
        // `Folio` on case-insensitive file systems.
        .executableTarget(name: "FolioCLI", dependencies: ["Folio"]),
        // A child process for the crash tests: runs transactions and reports each acknowledged one,
        // so the tests can SIGKILL it at random instants. Not a product.
        .executableTarget(name: "folio-crash-child", dependencies: ["Folio", "FolioCrashSupport"], path: "Tests/CrashChild"),
        // A child process for the sync convergence test: drains a store to a server; the test
        // SIGKILLs it mid-drain and starts it again.
        .executableTarget(name: "folio-sync-child", dependencies: ["Folio", "FolioCrashSupport"], path: "Tests/SyncChild"),
        // A client of the multi-client convergence test: applies offline operations to its store
        // and syncs it (push, then pull); the test SIGKILLs it mid-sync and starts it again.
        .executableTarget(name: "folio-client-child", dependencies: ["Folio"], path: "Tests/ClientChild"),
        // The entities and invariant the crash child and the process-level tests share.
        .target(name: "FolioCrashSupport", dependencies: ["Folio"], path: "Tests/CrashSupport"),
        // The README's example, kept compiling and running: `swift run quickstart`.
        .executableTarget(name: "quickstart", dependencies: ["Folio"], path: "Examples/Quickstart"),
        // The TyTE todo app of SEEDS.md on the command line: `swift run todo --help`.
        .executableTarget(name: "todo", dependencies: ["Folio"], path: "Examples/TodoApp", exclude: ["README.md"]),
        // An HTTP server on 127.0.0.1 that implements PROTOCOL.md and injects faults on demand,
        // and a TCP proxy that injects network faults in front of any server (FaultProxy), for
        // the sync tests, the reference server's tests and the drain benchmark.
        .target(name: "FolioTestServer", dependencies: ["FolioCrashSupport"], path: "Tests/TestServer"),
        // Every rule of PROTOCOL.md checked over raw HTTP/1.1 against a running server (POSIX
        // sockets, so it can send what no client library would). No dependency, not even Folio.
        .target(name: "FolioConformance", path: "Tests/Conformance"),
        .executableTarget(name: "folio-conformance", dependencies: ["FolioConformance"], path: "Tests/ConformanceTool"),
        .testTarget(name: "FolioTests", dependencies: ["Folio", "FolioCrashSupport", "FolioTestServer", "FolioConformance"]),
    ]
)

// Strictness for every target. (Warnings are errors in CI through `-Xswiftc -warnings-as-errors`;
// unsafeFlags here would stop apps from depending on Folio.)
for target in package.targets {
    var settings = target.swiftSettings ?? []
    settings.append(contentsOf: [
        .swiftLanguageMode(.v6),
        .enableUpcomingFeature("ExistentialAny"),
        .enableUpcomingFeature("InternalImportsByDefault"),
        .enableUpcomingFeature("MemberImportVisibility"),
    ])
    target.swiftSettings = settings
}

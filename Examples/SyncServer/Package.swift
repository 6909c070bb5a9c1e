// swift-tools-version: 6.1
import PackageDescription

// The reference sync server: PROTOCOL.md over Hummingbird, storing its own data with Folio.
// `swift run --package-path Examples/SyncServer folio-sync-server --port 8080 --data ./ServerData`
let package = Package(
    name: "FolioSyncServer",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(name: "Folio", path: "../.."),
        // Only Hummingbird (and what it pulls in); its swift-configuration trait is off, so that
        // package is never built.
        .package(url: "https://github.com/hummingbird-project/hummingbird", exact: "2.28.1", traits: []),
        // Already in Hummingbird's graph (at these versions); named for the types the server uses.
        .package(url: "https://github.com/apple/swift-http-types.git", exact: "1.8.0"),
        .package(url: "https://github.com/apple/swift-log.git", exact: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio.git", exact: "2.101.3"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", exact: "2.13.0"),
        // The PostgreSQL storage (`--postgres`): PostgresNIO and what it pulls in.
        .package(url: "https://github.com/vapor/postgres-nio.git", exact: "1.33.2"),
    ],
    targets: [
        // The server as a library, so the tests start it in-process.
        .target(
            name: "FolioSyncServer",
            dependencies: [
                .product(name: "Folio", package: "Folio"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ]
        ),
        .executableTarget(
            name: "folio-sync-server",
            dependencies: ["FolioSyncServer"]
        ),
        // The load generator of BENCHMARKS.md's server rows: PUTs over kept-alive connections.
        .executableTarget(name: "folio-sync-load"),
        // The TyTE models as a client app declares them, for the tests and their sync child.
        .target(name: "TodoModels", dependencies: [.product(name: "Folio", package: "Folio")], path: "Tests/TodoModels"),
        // One client's sync in a process of its own, SIGKILLed by the two-server convergence test.
        .executableTarget(
            name: "folio-sync-client-child",
            dependencies: ["TodoModels", .product(name: "Folio", package: "Folio")],
            path: "Tests/SyncClientChild"
        ),
        .testTarget(
            name: "FolioSyncServerTests",
            dependencies: [
                "FolioSyncServer",
                "TodoModels",
                .product(name: "Folio", package: "Folio"),
                // PROTOCOL.md's conformance suite, run in-process against the server.
                .product(name: "FolioConformance", package: "Folio"),
                // The fault proxy, in front of the server processes of the convergence test.
                .product(name: "FolioTestServer", package: "Folio"),
                .product(name: "FolioCrashSupport", package: "Folio"),
            ]
        ),
    ]
)

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

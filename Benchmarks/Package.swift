// swift-tools-version: 6.0
import PackageDescription

// The benchmarks: Folio side by side with SQLite (through GRDB) and the disk's own limits.
// A separate package, so the root package stays dependency-free:
//
//   swift run -c release --package-path Benchmarks folio-bench [--quick] [--rounds R] [--json]
let package = Package(
    name: "FolioBenchmarks",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(name: "Folio", path: ".."),
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
    ],
    targets: [
        .executableTarget(
            name: "folio-bench",
            dependencies: [
                .product(name: "Folio", package: "Folio"),
                .product(name: "FolioTestServer", package: "Folio"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            path: "Sources/FolioBench"
        )
    ]
)

for target in package.targets {
    var settings = target.swiftSettings ?? []
    settings.append(contentsOf: [
        .swiftLanguageMode(.v6),
        .enableUpcomingFeature("ExistentialAny"),
        .enableUpcomingFeature("MemberImportVisibility"),
    ])
    target.swiftSettings = settings
}

import FolioConformance
import Foundation

// folio-conformance <base-url> [options]: every PROTOCOL.md check against a running server, one
// line per check, then "N passed, N failed"; exit 1 on any failure, 2 on a bad command line.
let arguments = Array(CommandLine.arguments.dropFirst())
if arguments == ["--list"] {
    for name in ConformanceSuite.checkNames { print(name) }
    exit(0)
}
if arguments.isEmpty || arguments.contains("--help") {
    print(ConformanceOptions.usage)
    exit(arguments.isEmpty ? 2 : 0)
}
let options: ConformanceOptions
do {
    options = try ConformanceOptions.parse(arguments)
} catch {
    FileHandle.standardError.write(Data("folio-conformance: \(error)\n\(ConformanceOptions.usage)\n".utf8))
    exit(2)
}
FileHandle.standardOutput.write(Data("folio-conformance against \(options.baseURL.absoluteString), seed \(options.seed)\n".utf8))
// Each line is written as soon as its check ends (unbuffered), so a hung server shows where.
let summary = ConformanceSuite.run(options) { result in
    FileHandle.standardOutput.write(Data("\(result)\n".utf8))
}
print(summary)
exit(summary.failed.isEmpty ? 0 : 1)

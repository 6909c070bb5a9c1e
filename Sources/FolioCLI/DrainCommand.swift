import Folio
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `folio drain --server URL [--batch N] [--header 'Name: value']... [DIR]`
enum DrainCommand {
    static func run(_ raw: [String]) async throws -> Int32 {
        let arguments = try Arguments(raw, flags: [], options: ["server", "batch", "header"])
        let folder = CommandLineTool.folder(try arguments.positionals(min: 0, max: 1).first)
        guard let server = arguments.option("server") else { throw UsageError("--server URL is required") }
        guard let url = URL(string: server), let scheme = url.scheme, ["http", "https"].contains(scheme.lowercased()), url.host != nil else {
            throw UsageError("--server must be an http or https URL, not '\(server)'")
        }
        var options = HTTPTransport.Options()
        if let batch = arguments.option("batch") {
            guard let size = Int(batch), (1...1000).contains(size) else { throw UsageError("--batch must be a number from 1 to 1000") }
            options.batchSize = size
        }
        for header in arguments.options["header"] ?? [] {
            guard let colon = header.firstIndex(of: ":"), colon != header.startIndex else {
                throw UsageError("--header must look like 'Name: value', not '\(header)'")
            }
            options.headers[String(header[..<colon]).trimmingCharacters(in: .whitespaces)] =
                String(header[header.index(after: colon)...]).trimmingCharacters(in: .whitespaces)
        }
        try CommandLineTool.requireStore(folder)
        // On Linux, a connection cut inside a response's headers crashes URLSession: drain in a
        // child process and restart it (IsolatedSync).
        if let code = IsolatedSync.runInChildProcess(report: { Output.error($0) }) { return code }

        let store = try await Store.open(at: folder)
        let outcome = await withClosing(store) { store in
            try await drain(store, transport: HTTPTransport(baseURL: url, options: options))
        }
        let report = try outcome.get()
        var summary = "sent \(report.sent), failed \(report.deadLettered), conflicts settled \(report.conflicts), remaining \(report.remaining)"
        if let reason = report.stoppedBecause { summary += "; stopped: \(reason)" }
        if let next = report.nextAttempt { summary += "; next attempt due \(Output.timestamp(next))" }
        Output.line(summary)
        return report.remaining == 0 && report.deadLettered == 0 ? CommandLineTool.success : CommandLineTool.problemsFound
    }

    private static func drain(_ store: Store, transport: HTTPTransport) async throws -> DrainReport {
        let total = try await store.pendingCommandCount()
        let engine = SyncEngine(store: store, transport: transport)
        let events = await engine.events()
        let progress = Task {
            var line = ProgressLine(total: total)
            for await event in events {
                line.record(event)
            }
            line.finish()
        }
        defer { progress.cancel() }
        // Draining by hand means "the network is there": waits the network caused end; a delay
        // the server asked for (Retry-After, 5xx backoff) still holds and is reported.
        await engine.networkBecameAvailable()
        let report = try await engine.drainNow()
        progress.cancel()
        await progress.value
        return report
    }
}

/// The progress line on standard error: rewritten in place on a terminal, at most one line a
/// second otherwise (a log file does not want thousands of lines).
struct ProgressLine {
    let total: Int
    let isTerminal = isatty(STDERR_FILENO) != 0
    let start = ContinuousClock.now
    var sent = 0
    var failed = 0
    var lastPrinted: ContinuousClock.Instant?
    var printedAny = false

    init(total: Int) { self.total = total }

    mutating func record(_ event: SyncEvent) {
        switch event {
        case .sent: sent += 1
        case .deadLettered: failed += 1
        case .retrying(let sequence, let reason, _):
            Output.progress((isTerminal && printedAny ? "\n" : "") + "command \(sequence): \(reason.prefix(200)); will retry later\n")
            printedAny = false
            return
        case .blocked(let reason):
            Output.progress((isTerminal && printedAny ? "\n" : "") + "blocked: \(reason)\n")
            printedAny = false
            return
        default: return
        }
        let now = ContinuousClock.now
        let interval: Duration = isTerminal ? .milliseconds(200) : .seconds(1)
        if let lastPrinted, now - lastPrinted < interval { return }
        print(now)
    }

    mutating func finish() {
        if printedAny || sent + failed > 0 { print(.now) }
        if isTerminal && printedAny { Output.progress("\n") }
    }

    private mutating func print(_ now: ContinuousClock.Instant) {
        let elapsed = now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        let rate = seconds > 0 ? Int(Double(sent + failed) / seconds) : 0
        let text = "drained \(sent + failed) of \(total) (\(sent) sent, \(failed) failed), \(rate)/s"
        Output.progress(isTerminal ? "\r" + text + "\u{1B}[K" : text + "\n")
        lastPrinted = now
        printedAny = true
    }
}

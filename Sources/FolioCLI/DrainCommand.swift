import Folio
import Foundation

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
            var line = DrainProgress(total: total)
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

/// The drain's counts on the shared ``ProgressLine`` (on a terminal only), and its retries and
/// blocks as lines of their own (wherever standard error goes: they are diagnostics).
struct DrainProgress {
    let total: Int
    let line = ProgressLine()
    let start = ContinuousClock.now
    var sent = 0
    var failed = 0

    init(total: Int) { self.total = total }

    mutating func record(_ event: SyncEvent) {
        switch event {
        case .sent: sent += 1
        case .deadLettered: failed += 1
        case .retrying(let sequence, let reason, _):
            line.note("command \(sequence): \(reason.prefix(200)); will retry later")
            return
        case .blocked(let reason):
            line.note("blocked: \(reason)")
            return
        default: return
        }
        show(force: false)
    }

    /// Shows the last count and leaves it on its line, before the summary.
    func finish() {
        if sent + failed > 0 { show(force: true) }
        line.finish(keep: true)
    }

    private func show(force: Bool) {
        guard line.isTerminal else { return }
        let elapsed = ContinuousClock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        let rate = seconds > 0 ? Int(Double(sent + failed) / seconds) : 0
        line.show("drained \(sent + failed) of \(total) (\(sent) sent, \(failed) failed), \(rate)/s", force: force)
    }
}

import Folio
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The progress of a long command: one line on standard error, rewritten in place (`\r`) at most
/// five times a second, and only when standard error is a terminal. When it is not (a pipe, a log
/// file, a test), nothing is shown, so scripts and `--json` readers see exactly what they saw
/// before. Standard output never gets any of it.
///
/// Called from the library's threads (a ``ProgressHandler``) and from the drain's event loop, so
/// every access goes through a lock.
final class ProgressLine: @unchecked Sendable {
    /// How often the line may be redrawn.
    static let interval: Duration = .milliseconds(200)
    let isTerminal: Bool
    private let lock = NSLock()
    private var lastDrawn: ContinuousClock.Instant?
    /// Whether the terminal's cursor is at the end of a progress line (not at a line's start).
    private var drawn = false

    init(isTerminal: Bool = isatty(STDERR_FILENO) != 0) { self.isTerminal = isTerminal }

    /// Draws `text` over the line, unless it was drawn less than ``interval`` ago (`force` draws
    /// anyway: the last count of a phase). Nothing when standard error is not a terminal.
    func show(_ text: String, force: Bool = false) {
        guard isTerminal else { return }
        lock.withLock {
            let now = ContinuousClock.now
            if !force, let lastDrawn, now - lastDrawn < Self.interval { return }
            Output.progress("\r" + Output.printable(text) + "\u{1B}[K")
            lastDrawn = now
            drawn = true
        }
    }

    /// A diagnostic that must stay (a retry, a block): on a line of its own, whatever standard
    /// error is; the progress line is drawn again below it on the next count.
    func note(_ text: String) {
        lock.withLock {
            Output.progress((drawn ? "\r\u{1B}[K" : "") + Output.printable(text) + "\n")
            drawn = false
            lastDrawn = nil
        }
    }

    /// Ends the line before the command's own output: clears it, or with `keep` leaves its last
    /// text and moves to the next line. Safe to call more than once.
    func finish(keep: Bool = false) {
        lock.withLock {
            guard drawn else { return }
            Output.progress(keep ? "\n" : "\r\u{1B}[K")
            drawn = false
        }
    }

    /// A handler for the library's long operations that shows `folio COMMAND: PHASE N of M
    /// files`; nil when standard error is not a terminal, so the library does not even count.
    func handler(_ command: String) -> ProgressHandler? {
        guard isTerminal else { return nil }
        return { [self] progress in
            let percent = progress.total > 0 ? " (\(progress.completed * 100 / progress.total)%)" : ""
            show(
                "folio \(command): \(progress.phase) \(progress.completed) of \(progress.total) files\(percent)",
                force: progress.completed == progress.total)
        }
    }

    /// Runs `body` with a progress handler for `command` (nil when standard error is not a
    /// terminal) and clears the line once it returns or throws, before the command prints.
    static func during<T>(_ command: String, _ body: (ProgressHandler?) async throws -> T) async throws -> T {
        let line = ProgressLine()
        defer { line.finish() }
        return try await body(line.handler(command))
    }
}

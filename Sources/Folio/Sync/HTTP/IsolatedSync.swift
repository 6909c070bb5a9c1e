internal import Foundation
#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// Runs a command line tool's sync in a child process, so that a crash of the HTTP layer does not
/// end the tool, and restarts it.
///
/// On Linux, swift-corelibs-foundation's URLSession traps ("Transfer completed, but there's no
/// response", swift-corelibs-foundation #5285, still in Swift 6.3.1) when a connection is closed in
/// an orderly way (FIN) after a complete status line and before the blank line that ends the
/// response's headers, as a proxy or a load balancer cutting a connection may do. A reset (RST),
/// a cut inside the status line or inside the body are ordinary errors. No task kind, delegate
/// callback or session setting avoids the trap, and an app cannot catch it; what an app can do is
/// keep its sync in a process of its own. Folio's sync is safe to stop at any instant (a command
/// whose answer was lost is sent again with the same idempotency key), so the restarted child
/// simply goes on. On Apple platforms URLSession has no such trap and this runs nothing.
///
/// ```swift
/// if let exitCode = IsolatedSync.runInChildProcess() { exit(exitCode) }
/// // The child (or an Apple platform) goes on to sync here.
/// ```
public enum IsolatedSync {
    /// The environment variable that marks the child.
    public static let childMarker = "FOLIO_ISOLATED_SYNC_CHILD"
    /// The environment variable that gives the child its parent's process id: the child ends
    /// when the parent does.
    static let parentMarker = "FOLIO_ISOLATED_SYNC_PARENT"

    /// Runs this same command line again in a child process, restarting it when the HTTP layer
    /// crashed, and says how it ended.
    /// - Parameters:
    ///   - restarts: How many crashes to survive.
    ///   - report: Told of each crash and restart (a tool prints it on standard error).
    /// - Returns: The child's exit code, or nil when the caller must do the work itself: it is
    ///   the child, it runs on an Apple platform, or no child could be started.
    public static func runInChildProcess(restarts: Int = 5, report: (String) -> Void = { _ in }) -> Int32? {
        #if canImport(FoundationNetworking)
        let environment = ProcessInfo.processInfo.environment
        guard environment[childMarker] == nil else {
            if let parent = environment[parentMarker].flatMap({ pid_t($0) }) { endWithParent(parent) }
            return nil
        }
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        for attempt in 0...restarts {
            let child = Process()
            child.executableURL = executable
            child.arguments = Array(CommandLine.arguments.dropFirst())
            var childEnvironment = environment
            childEnvironment[childMarker] = "1"
            childEnvironment[parentMarker] = String(getpid())
            // The trap's backtrace would take seconds to symbolicate before the restart.
            childEnvironment["SWIFT_BACKTRACE"] = "enable=no"
            child.environment = childEnvironment
            do { try child.run() } catch {
                report("could not start the sync in a child process (\(error)); syncing in this one")
                return nil
            }
            child.waitUntilExit()
            let crashed =
                child.terminationReason == .uncaughtSignal
                && [SIGILL, SIGTRAP].contains(child.terminationStatus)
            guard crashed else {
                return child.terminationReason == .uncaughtSignal ? 128 + child.terminationStatus : child.terminationStatus
            }
            guard attempt < restarts else { break }
            report(
                "the HTTP layer crashed on a connection cut inside a response's headers "
                    + "(swift-corelibs-foundation #5285); nothing is lost, syncing again")
        }
        report("the HTTP layer crashed \(restarts + 1) times; run the sync again later")
        return 1
        #else
        return nil
        #endif
    }

    #if canImport(FoundationNetworking)
    /// In the child: ends it (SIGKILL, which Folio's sync is made to survive) as soon as its parent
    /// is gone, so that a person who kills the tool (`kill -9`, a closed terminal) stops the sync
    /// too, instead of leaving it running beside the tool's next run. Linux gives an orphan a new
    /// parent; a watcher thread looks for that every 100 ms.
    private static func endWithParent(_ parent: pid_t) {
        guard getppid() == parent else { kill(getpid(), SIGKILL); return }
        let watcher = Thread {
            while getppid() == parent { usleep(100_000) }
            kill(getpid(), SIGKILL)
        }
        watcher.name = "Folio IsolatedSync parent watcher"
        watcher.start()
    }
    #endif
}

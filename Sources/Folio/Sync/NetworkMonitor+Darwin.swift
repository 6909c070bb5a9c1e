// Apple platforms: the NetworkMonitor of a SyncEngine, an `NWPathMonitor` (Network framework) on
// a queue of its own that calls `onAvailable` each time the system reports a usable path
// (`.satisfied`); the engine then drains at once. Linux has no such monitor (NetworkMonitor.swift).
// NOT compiled or tested by this project's CI (Linux only): checked by eye against Apple's API.
#if canImport(Network)
internal import Dispatch
internal import Network

/// Starts an `NWPathMonitor` that calls `onAvailable` (on its own queue) whenever a usable path
/// appears, including once at start when the network is up.
func makeNetworkMonitor(onAvailable: @escaping @Sendable () -> Void) -> (any NetworkMonitor)? {
    PathMonitor(onAvailable: onAvailable)
}

/// An `NWPathMonitor`, which may be cancelled from any thread.
private final class PathMonitor: NetworkMonitor, @unchecked Sendable {
    private let monitor = NWPathMonitor()

    init(onAvailable: @escaping @Sendable () -> Void) {
        monitor.pathUpdateHandler = { @Sendable path in
            guard path.status == .satisfied else { return }
            onAvailable()
        }
        monitor.start(queue: DispatchQueue(label: "folio.sync.path"))
    }

    func cancel() {
        monitor.cancel()
    }
}
#endif

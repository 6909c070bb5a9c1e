/// Tells a ``SyncEngine`` that the network is back, where the platform can: `NWPathMonitor` on
/// Apple platforms (NetworkMonitor+Darwin.swift, not compiled by this project's CI). Elsewhere
/// (Linux) there is none: ``makeNetworkMonitor(onAvailable:)`` returns nil, and an app calls
/// ``SyncEngine/networkBecameAvailable()`` itself; the engine's poll covers the rest.
protocol NetworkMonitor: Sendable {
    /// Stops monitoring.
    func cancel()
}

#if !canImport(Network)
/// No network monitor on this platform (see ``NetworkMonitor``): always nil.
func makeNetworkMonitor(onAvailable: @escaping @Sendable () -> Void) -> (any NetworkMonitor)? {
    nil
}
#endif

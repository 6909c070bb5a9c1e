internal import Foundation

/// The identities (`stat`) of the files a query on fields will check against the field index,
/// taken on another thread while the query's own thread reads the index: the two are independent,
/// and a ten-year scan needs thousands of each.
///
/// Taking a file's identity before the index is read is as good as after: an entry is used only
/// when it has exactly that identity, and the objects then read from the file go through a
/// descriptor whose `fstat` must match it too (StoreEngine+Scan.swift).
final class IdentityPrefetch: @unchecked Sendable {
    private let group = DispatchGroup()
    /// Written by the prefetching thread only, read after `group` is done.
    private var identities: [PartitionKey: FileIdentity] = [:]

    /// Starts taking the identities of the files at `addresses`.
    init(_ addresses: [PartitionAddress], fileSystem: FileSystem) {
        DispatchQueue.global(qos: .userInitiated).async(group: group) { [self] in
            var found: [PartitionKey: FileIdentity] = [:]
            found.reserveCapacity(addresses.count)
            for address in addresses {
                do {
                    if let identity = try fileSystem.identity(address.path) { found[address.key] = identity }
                } catch {
                    continue   // left out: the scan takes it again, and the read that follows reports it
                }
            }
            identities = found
        }
    }

    /// The identities of the files that were there, once all are taken (a missing or unreadable
    /// file has none: the scan looks at it again).
    func wait() -> [PartitionKey: FileIdentity] {
        group.wait()
        return identities
    }
}

internal import Foundation

extension StoreEngine {
    /// Scans over fewer partitions than this decode every entity: the filter's set-up (a few
    /// decodes of a sample entity) is not worth it.
    static let fieldFilterThreshold = 8

    /// The query's predicate compiled to fields (``FieldFilter``), for a scan over `addresses`;
    /// nil when there is no predicate, the scan is short, or the predicate or the entity's
    /// `Decodable` conformance does not allow it (then every entity is decoded, as before).
    ///
    /// The fields are mapped with a sample entity of the collection: one already in memory, or
    /// the first of the scanned partitions, loaded as the scan would load it.
    func fieldFilter<E: Entity>(_ predicate: Predicate<E>?, over addresses: [PartitionAddress]) throws(FolioError) -> FieldFilter? {
        guard let predicate, ScanAccelerators.enabled.contains(.fields), addresses.count >= Self.fieldFilterThreshold,
            let filter = FieldFilter.compile(predicate)
        else { return nil }
        var sample = addresses.lazy.compactMap { self.partitions.peek($0)?.entities }.first { !$0.isEmpty }
        for address in addresses.prefix(3) where sample == nil {
            let entities = try partition(address).entities
            if !entities.isEmpty { sample = entities }
        }
        guard let entities = sample, let id = entities.keys.min(by: { $0.precedesInKeyOrder($1) }),
            case .object(let fields)? = entities[id],
            let keys = FieldProbe.keys(E.self, keyPaths: filter.keyPaths, sample: fields, coder: coder)
        else { return nil }
        return filter.reading(keys)
    }
}

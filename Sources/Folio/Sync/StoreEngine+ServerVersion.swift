/// Where the store keeps what the server has of an entity, for the sync engine's requests and
/// acknowledgements (FORMAT.md, `versions`).
extension StoreEngine {
    /// The partition whose `versions` hold the server's version of an entity as one of its
    /// commands must be sent on it, and as the acknowledgement of the command before it stores it:
    ///
    /// - a delete's own partition, where the local delete left the version (a tombstone version);
    /// - for any other command, the partition of the entity's first delete pending after it,
    ///   since that delete must be sent on the version this command leaves on the server, even
    ///   when the entity was created again since, wherever it lives now;
    /// - with no such delete, where the entity lives (`locate`).
    ///
    /// One rule for both sides: the queue's commands of an entity reach the server in order, each
    /// made on the version its predecessor's acknowledgement stored, through deletes and
    /// re-creations alike.
    /// - Parameters:
    ///   - sequence: The command's number.
    ///   - deletedFrom: The partition the command deletes the entity from, if it is a delete.
    ///   - pending: The entity's pending commands, if the caller has them read.
    ///   - locate: Where the entity lives now, as the caller sees it (a transaction's view).
    /// - Returns: Nil if the version lives nowhere: the entity is deleted here and no delete of it
    ///   waits (the server is not known to have it).
    func serverVersionAddress(
        collection: String, granularity: PartitionGranularity, id: String, command sequence: UInt64, deletedFrom: String?,
        pending: [(sequence: UInt64, command: JSONValue)]? = nil, locate: () throws(FolioError) -> PartitionAddress?
    ) throws(FolioError) -> PartitionAddress? {
        var partition = deletedFrom
        if partition == nil {
            var commands = pending ?? []
            if pending == nil { commands = try pendingCommands(collection: collection, id: id) }
            let delete = commands.first {
                $0.sequence > sequence && $0.command["operation"]?.stringValue == "delete"
            }
            partition = delete?.command["partition"]?.stringValue
        }
        if let partition { return try PartitionAddress(collection: collection, granularity: granularity, partitionText: partition) }
        return try locate()
    }
}

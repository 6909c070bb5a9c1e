/// What ``Store/recover(at:progress:)`` did, and what ``Store/verify(at:progress:)`` finds afterwards.
public struct RecoveryReport: Sendable, Equatable {
    /// One thing recovery did to the folder.
    public struct Action: Sendable, Equatable, CustomStringConvertible {
        /// What kind of thing.
        public enum Kind: String, Sendable {
            /// Committed transactions of the journal were written to the files.
            case replayedJournal
            /// A torn journal tail (a transaction that never committed) was dropped.
            case droppedTornTail
            /// A temp file left by a crash was removed from `.folio/tmp/`.
            case removedTempFile
            /// A file that could not be read was moved aside (never deleted).
            case quarantined
            /// A damaged derived file (an index) was deleted; Folio rebuilds it when needed.
            case removedDerivedFile
            /// A damaged journal was moved aside and replaced by one holding the transactions in
            /// it that validate.
            case salvagedJournal
        }

        /// What kind of thing was done.
        public let kind: Kind
        /// The file concerned, relative to the store's folder.
        public let path: String
        /// What was done, and what it means for the data.
        public let message: String

        /// `path: message`.
        public var description: String { SafeText.escaped("\(path): \(message)") }
    }

    /// Everything recovery did, in order.
    public let actions: [Action]
    /// The folder's state afterwards. Errors left here need a person (a duplicate id, an entity
    /// whose `id` field disagrees with its key…).
    public let remaining: VerificationReport
}

import Folio

/// The last change sequence number given out: `serverState.json`, entity `changeSequence`.
///
/// Every change to an entity takes the next number, in the transaction that makes the change;
/// transactions are serialized, so the numbers follow commit order and the feed's cursor
/// (`?since=`) only moves forward.
struct ChangeCounter: Entity {
    static let collection = "serverState"
    static let partitioning = Partitioning<ChangeCounter>.none
    static let entityID = "changeSequence"

    var id = ChangeCounter.entityID
    var value: Int64
}

public import Folio

// What the crash child (Tests/CrashChild) and the process-level tests (FolioTests) share: the
// entities the child writes and the invariant both check. One copy, so the child's `read` mode and
// the tests cannot drift apart.
//
// Each writer owns slots `WRITER-0` … and one ledger `WRITER-ledger`, written by every one of its
// transactions: the ledger's `transaction` is the writer's last, and `deletedAt` maps each deleted
// id to the transaction that last deleted it. A slot written by transaction n carries
// `transaction = n` and `group` = every id that transaction touched, the ledger's included.

/// What `Slot` and `PushedSlot` share, so one transaction function writes either and one check
/// reads either.
public protocol SlotRecord: Entity, Equatable where ID == String {
    var id: String { get }
    var day: String { get set }
    var transaction: Int { get set }
    var group: [String] { get set }
    var writer: String { get }
    /// Only in a writer's ledger: id → the transaction that last deleted it.
    var deletedAt: [String: Int] { get set }
    init(id: String, day: String, transaction: Int, group: [String], writer: String, deletedAt: [String: Int])
}

extension SlotRecord {
    /// The id of a writer's ledger.
    public static func ledgerID(_ writer: String) -> String { "\(writer)-ledger" }

    /// The same fields as a local-only `Slot`, for the checks.
    public var asSlot: Slot {
        Slot(id: id, day: day, transaction: transaction, group: group, writer: writer, deletedAt: deletedAt)
    }
}

/// A slot of a local-only collection: the child writes these by default.
public struct Slot: SlotRecord {
    public static let collection = "slots"
    public static let partitioning = Partitioning<Slot>.day(\.day)

    public var id: String
    public var day: String
    public var transaction: Int
    public var group: [String]
    public var writer: String
    public var deletedAt: [String: Int]

    public init(id: String, day: String, transaction: Int, group: [String], writer: String, deletedAt: [String: Int] = [:]) {
        self.id = id
        self.day = day
        self.transaction = transaction
        self.group = group
        self.writer = writer
        self.deletedAt = deletedAt
    }
}

/// The same fields in a push collection without coalescing (`--outbox`): each transaction also
/// enqueues one command per changed slot, its ledger's included.
public struct PushedSlot: SlotRecord {
    public static let collection = "pushed"
    public static let partitioning = Partitioning<PushedSlot>.day(\.day)
    public static let syncMode = SyncMode.push

    public var id: String
    public var day: String
    public var transaction: Int
    public var group: [String]
    public var writer: String
    public var deletedAt: [String: Int]

    public init(id: String, day: String, transaction: Int, group: [String], writer: String, deletedAt: [String: Int] = [:]) {
        self.id = id
        self.day = day
        self.transaction = transaction
        self.group = group
        self.writer = writer
        self.deletedAt = deletedAt
    }
}

/// The group invariant: no transaction is partly visible. A slot written by transaction n sees
/// each member of its group at n or later, or gone because its writer's ledger says transaction n
/// or a later one deleted it.
/// - Returns: One sentence per violation (empty if none).
public func groupViolations(in slots: [Slot]) -> [String] {
    var problems: [String] = []
    var byID: [String: Slot] = [:]
    for slot in slots {
        if byID[slot.id] != nil { problems.append("\(slot.id) appears twice") }
        byID[slot.id] = slot
    }
    for slot in slots {
        guard let ledger = byID[Slot.ledgerID(slot.writer)] else {
            problems.append("\(slot.id) (transaction \(slot.transaction)) has no ledger")
            continue
        }
        if let deleted = ledger.deletedAt[slot.id], deleted >= slot.transaction {
            problems.append("\(slot.id) of transaction \(slot.transaction) is present, but transaction \(deleted) deleted it")
        }
        for member in slot.group where member != slot.id {
            if let other = byID[member] {
                if other.transaction < slot.transaction {
                    problems.append("\(slot.id) is at transaction \(slot.transaction) but its group member \(member) at \(other.transaction)")
                } else if other.transaction == slot.transaction && other.group != slot.group {
                    problems.append("\(slot.id) and \(member) are both at transaction \(slot.transaction) with different groups")
                }
            } else if ledger.deletedAt[member, default: 0] < slot.transaction {
                problems.append("\(member) of transaction \(slot.transaction) (group of \(slot.id)) is missing and was not deleted since")
            }
        }
    }
    return problems
}

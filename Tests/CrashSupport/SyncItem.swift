public import Folio

/// The entity of the sync convergence test (FolioTests/Sync/SyncConvergenceTests.swift), which
/// the test writes and the sync child (Tests/SyncChild) drains: day-partitioned, pushed, not
/// coalesced, so every change is one command.
public struct SyncItem: Entity, Equatable {
    public static let collection = "items"
    public static let partitioning = Partitioning<SyncItem>.day(\.day)
    public static let syncMode = SyncMode.push

    public var id: String
    public var day: String
    public var value: Int
    public var note: String

    public init(id: String, day: String, value: Int, note: String) {
        self.id = id
        self.day = day
        self.value = value
        self.note = note
    }
}

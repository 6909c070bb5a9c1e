import Folio

// The entities of the multi-client convergence test (FolioTests/Sync/MultiClientConvergenceTests),
// declared here only: the test itself reads and writes them as plain JSON, so it cannot drift into
// reusing Folio's own decoding to predict Folio's results.

/// A todo of one day: moving it changes its partition file. Pushed with coalescing, as the TyTE
/// app's todos are, so offline edits of one todo collapse into one command.
struct ConvergenceTodo: Entity, Equatable {
    static let collection = "todos"
    static let partitioning = Partitioning<ConvergenceTodo>.day(\.date)
    static let syncMode = SyncMode.push(coalescing: true)

    var id: String
    var title: String
    var date: String
    var done: Bool
    var tagID: String?
    var note: String
}

/// A tag, in one unpartitioned file. Pushed without coalescing: every change is one command.
struct ConvergenceTag: Entity, Equatable {
    static let collection = "tags"
    static let partitioning = Partitioning<ConvergenceTag>.none
    static let syncMode = SyncMode.push

    var id: String
    var name: String
    var color: String
}

/// The payload of the test's custom command: a token the test finds on the server exactly once.
struct StampPayload: Codable, Sendable {
    var token: String
}

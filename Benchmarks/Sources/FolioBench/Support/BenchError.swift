/// A benchmark failure: a contender did not do what it was asked (a wrong count, a failed
/// child process), so its time means nothing and the run stops.
struct BenchError: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}

/// The timed phases of a write contender: its commits, and commits + the checkpoint after them.
struct WriteTiming: Sendable {
    var commit: Duration
    var total: Duration
}

/// A fresh process's open + one-day read: the whole, the open alone, and the todos read.
struct ColdRead: Sendable {
    var total: Duration
    var open: Duration
    var todos: Int
}

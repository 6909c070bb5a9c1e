/// What ``Store/verify(at:progress:)`` found: every problem, most severe first within each file.
public struct VerificationReport: Sendable, Equatable {
    /// Every problem found, sorted by file, line and column.
    public let problems: [StoreProblem]
    /// How many files were read.
    public let filesChecked: Int
    /// How many entities the partition files hold.
    public let entitiesChecked: Int

    /// Creates a report.
    /// - Parameters:
    ///   - problems: The problems found.
    ///   - filesChecked: How many files were read.
    ///   - entitiesChecked: How many entities the partition files hold.
    public init(problems: [StoreProblem], filesChecked: Int, entitiesChecked: Int) {
        self.problems = problems
        self.filesChecked = filesChecked
        self.entitiesChecked = entitiesChecked
    }

    /// The problems of severity ``StoreProblem/Severity/error``: what makes the store unhealthy.
    public var errors: [StoreProblem] { problems.filter { $0.severity == .error } }
    /// The problems of severity ``StoreProblem/Severity/warning``.
    public var warnings: [StoreProblem] { problems.filter { $0.severity == .warning } }
    /// The problems of severity ``StoreProblem/Severity/note``.
    public var notes: [StoreProblem] { problems.filter { $0.severity == .note } }
    /// True when no error was found (warnings and notes may remain).
    public var isHealthy: Bool { !problems.contains { $0.severity == .error } }
}

import Foundation

/// The outcome of one check.
public struct ConformanceResult: Sendable, CustomStringConvertible {
    public enum Outcome: Sendable, Equatable {
        case passed
        case failed(String)
        case skipped(String)
    }

    /// The check's short name, as PROTOCOL.md's Conformance checklist lists it (`key-reuse`).
    public var name: String
    /// The rule it checks, in a sentence.
    public var rule: String
    public var outcome: Outcome

    /// `PASS name (rule)`, `FAIL name (rule): why`, `SKIP name (rule): why`.
    public var description: String {
        switch outcome {
        case .passed: "PASS \(name) (\(rule))"
        case .failed(let why): "FAIL \(name) (\(rule)): \(why)"
        case .skipped(let why): "SKIP \(name) (\(rule)): \(why)"
        }
    }
}

/// What a run found.
public struct ConformanceSummary: Sendable, CustomStringConvertible {
    public var results: [ConformanceResult]
    public var seed: UInt64

    public var passed: Int { results.filter { $0.outcome == .passed }.count }
    public var failed: [ConformanceResult] { results.filter { if case .failed = $0.outcome { true } else { false } } }
    public var skipped: Int { results.filter { if case .skipped = $0.outcome { true } else { false } }.count }

    /// `N passed, N failed (N skipped, seed S)`.
    public var description: String { "\(passed) passed, \(failed.count) failed (\(skipped) skipped, seed \(seed))" }
}

/// The protocol conformance suite: every rule of PROTOCOL.md, checked over raw HTTP/1.1 against a
/// running server.
///
/// ```swift
/// let summary = ConformanceSuite.run(options) { print($0) }
/// ```
///
/// The checks create entities with ids from ``ConformanceOptions/seed`` and leave them behind; run
/// the suite against a server with data to spare (a fresh one is best).
public enum ConformanceSuite {
    /// The names of every check, in the order they run.
    public static var checkNames: [String] { checks.map(\.name) }

    /// Runs every check in order.
    /// - Parameters:
    ///   - options: What the server serves, and how to reach it.
    ///   - report: Called with each result as soon as it is known.
    /// - Returns: Every result, and the seed.
    public static func run(_ options: ConformanceOptions, report: (ConformanceResult) -> Void = { _ in }) -> ConformanceSummary {
        let context = CheckContext(options: options)
        var results: [ConformanceResult] = []
        for check in checks {
            let outcome: ConformanceResult.Outcome
            do {
                try check.run(context)
                outcome = .passed
            } catch let skip as CheckSkip {
                outcome = .skipped(skip.reason)
            } catch {
                outcome = .failed("\(error)")
            }
            let result = ConformanceResult(name: check.name, rule: check.rule, outcome: outcome)
            report(result)
            results.append(result)
        }
        return ConformanceSummary(results: results, seed: options.seed)
    }

    static let checks: [Check] = versionChecks + idempotencyChecks + bodyChecks + pullChecks + batchChecks + modelChecks + limitChecks + authChecks
}

/// One rule, checked.
struct Check: Sendable {
    /// A short name, as PROTOCOL.md's Conformance checklist lists it: `create`, `key-reuse`.
    var name: String
    /// The rule, in a sentence.
    var rule: String
    var run: @Sendable (CheckContext) throws -> Void

    init(_ name: String, _ rule: String, _ run: @escaping @Sendable (CheckContext) throws -> Void) {
        self.name = name
        self.rule = rule
        self.run = run
    }
}

/// A check that does not apply to this server (thrown by a check).
struct CheckSkip: Error {
    var reason: String
}

/// A rule the server broke (thrown by a check).
struct CheckFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

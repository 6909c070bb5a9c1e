import Foundation

/// A mistake in how `todo` was called: printed with the command's usage, exit status 2.
struct UsageError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A failure that is not the caller's typo (no such todo, no server): exit status 1.
struct Failure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// One command's arguments, parsed by hand (the package has no dependencies): positional words,
/// `--name value` (or `--name=value`) options, and `--flag`s. `--` ends the options, so a title
/// may start with a dash.
struct Arguments {
    private(set) var positional: [String] = []
    private var values: [String: String] = [:]
    private var flags: Set<String> = []

    /// Parses `words`, accepting only the options and flags the command declares.
    init(_ words: [String], options: Set<String>, flags allowedFlags: Set<String>) throws(UsageError) {
        var rest = words[...]
        while let word = rest.popFirst() {
            if word == "--" {
                positional += rest
                break
            }
            guard word.hasPrefix("--") || word == "-h" else {
                positional.append(word)
                continue
            }
            var name = word == "-h" ? "help" : String(word.dropFirst(2))
            var inline: String?
            if let equals = name.firstIndex(of: "=") {
                inline = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            if allowedFlags.contains(name), inline == nil {
                flags.insert(name)
            } else if options.contains(name) {
                guard let value = inline ?? rest.popFirst() else { throw UsageError("--\(name) needs a value") }
                guard values.updateValue(value, forKey: name) == nil else { throw UsageError("--\(name) is given twice") }
            } else {
                throw UsageError("unknown option \(word)")
            }
        }
    }

    /// The value of `--name`, if given.
    func value(_ name: String) -> String? { values[name] }

    /// Whether `--name` was given.
    func has(_ flag: String) -> Bool { flags.contains(flag) }

    /// Exactly `count` positional arguments, or a usage error naming what they are.
    func positional(_ count: Int, _ names: String) throws(UsageError) -> [String] {
        guard positional.count == count else {
            throw UsageError("expected \(names), got \(positional.isEmpty ? "nothing" : positional.map { "\"\($0)\"" }.joined(separator: " "))")
        }
        return positional
    }
}

/// Days as the todo model stores them: "YYYY-MM-DD" in the user's calendar.
enum Day {
    /// "YYYY-MM-DD" of a moment, in the current time zone.
    static func of(_ date: Date) -> String {
        let parts = Calendar(identifier: .gregorian).dateComponents(in: .current, from: date)
        return String(format: "%04d-%02d-%02d", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0)
    }

    static var today: String { of(Date()) }

    /// A day the user typed: `YYYY-MM-DD`, `today`, `tomorrow` or `yesterday`.
    static func parse(_ text: String) throws(UsageError) -> String {
        switch text.lowercased() {
        case "today": return today
        case "tomorrow": return of(Calendar.current.date(byAdding: .day, value: 1, to: Date()) ?? Date())
        case "yesterday": return of(Calendar.current.date(byAdding: .day, value: -1, to: Date()) ?? Date())
        default:
            let parts = text.split(separator: "-", omittingEmptySubsequences: false)
            guard parts.count == 3, [4, 2, 2] == parts.map(\.count), parts.allSatisfy({ $0.allSatisfy { $0.isASCII && $0.isNumber } }),
                let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]), year >= 1,
                DateComponents(calendar: Calendar(identifier: .gregorian), year: year, month: month, day: day).isValidDate
            else { throw UsageError("\"\(text)\" is not a day (YYYY-MM-DD, today, tomorrow or yesterday)") }
            return text
        }
    }

    /// A month the user typed: `YYYY-MM`.
    static func parseMonth(_ text: String) throws(UsageError) -> String {
        do {
            guard text.count == 7 else { throw UsageError("") }
            return String(try parse(text + "-01").prefix(7))
        } catch {
            throw UsageError("\"\(text)\" is not a month (YYYY-MM)")
        }
    }
}

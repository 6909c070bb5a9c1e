/// A command line, hand-parsed: positional arguments, `--flag`s, and `--option value` (or
/// `--option=value`) pairs, checked against what the subcommand accepts.
struct Arguments {
    var positional: [String] = []
    var flags: Set<String> = []
    var options: [String: [String]] = [:]

    /// - Parameters:
    ///   - raw: The arguments after the subcommand's name.
    ///   - flags: The flags the subcommand accepts (without `--`).
    ///   - options: The options that take a value.
    /// - Throws: ``UsageError`` for an unknown option or a missing value.
    init(_ raw: [String], flags known: Set<String>, options valued: Set<String> = []) throws(UsageError) {
        var index = 0
        var onlyPositional = false
        while index < raw.count {
            let argument = raw[index]
            index += 1
            if onlyPositional || !argument.hasPrefix("-") || argument == "-" {
                positional.append(argument)
                continue
            }
            if argument == "--" { onlyPositional = true; continue }
            if argument == "-h" { flags.insert("help"); continue }
            guard argument.hasPrefix("--") else { throw UsageError("unknown option \(argument)") }
            var name = String(argument.dropFirst(2))
            var inlineValue: String?
            if let equals = name.firstIndex(of: "=") {
                inlineValue = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            if known.contains(name) || name == "help" {
                guard inlineValue == nil else { throw UsageError("--\(name) takes no value") }
                flags.insert(name)
            } else if valued.contains(name) {
                if let inlineValue {
                    options[name, default: []].append(inlineValue)
                } else {
                    guard index < raw.count else { throw UsageError("--\(name) needs a value") }
                    options[name, default: []].append(raw[index])
                    index += 1
                }
            } else {
                throw UsageError("unknown option --\(name)")
            }
        }
    }

    var wantsHelp: Bool { flags.contains("help") }

    func option(_ name: String) -> String? { options[name]?.last }

    /// The positionals, checked against how many the subcommand takes.
    func positionals(min: Int, max: Int) throws(UsageError) -> [String] {
        if positional.count < min { throw UsageError("missing argument") }
        if positional.count > max { throw UsageError("unexpected argument \(positional[max])") }
        return positional
    }
}

/// The command line cannot be understood: exit code 2, with the subcommand's usage.
struct UsageError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}

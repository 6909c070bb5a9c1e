import Foundation

/// Where the tool writes: results to standard output, diagnostics and progress to standard error.
enum Output {
    static func line(_ text: String) {
        FileHandle.standardOutput.write(Data((printable(text) + "\n").utf8))
    }

    static func error(_ text: String) {
        FileHandle.standardError.write(Data((printable(text) + "\n").utf8))
    }

    /// The tool prints what it read from files and servers (ids, reasons, names): control
    /// characters (escape sequences, NUL, C1) and direction overrides are shown escaped, as the
    /// library's error descriptions do; the tool's own line breaks stay.
    static func printable(_ text: String) -> String {
        var result = ""
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x0A, 0x09: result.unicodeScalars.append(scalar)
            case 0..<0x20, 0x7F...0x9F, 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069:
                result += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// Raw text to standard error (progress lines that rewrite themselves with `\r`).
    static func progress(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }

    /// Pretty JSON with sorted keys, one document per run.
    static func json(_ value: Any) throws {
        let data = try JSONSerialization.data(withJSONObject: value, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        FileHandle.standardOutput.write(data + Data("\n".utf8))
    }

    /// A JSON text (a command file) as a value to embed in a document.
    static func embedded(_ text: String) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
    }

    static func timestamp(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }
}

/// `Optional` as a JSON value: `NSNull` when nil.
func jsonValue(_ value: Any?) -> Any { value ?? NSNull() }

import Foundation

/// Where the tool writes: results to standard output, diagnostics and progress to standard error.
enum Output {
    static func line(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    static func error(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
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

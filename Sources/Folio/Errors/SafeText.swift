/// Text from outside (ids, file names, JSON keys, a server's words) made safe to print: control
/// characters (C0, DEL, C1: NUL, escape sequences that would drive a terminal, newlines that would
/// forge log lines) and the invisible direction overrides that reorder what a person reads become
/// visible escapes such as `\u{1B}`. Everything else, accents and emoji included, stays as it is.
/// Every error message passes through it (``FolioError/description``, ``StoreProblem/description``).
enum SafeText {
    static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var result = ""
        result.reserveCapacity(text.utf8.count + 8)
        for scalar in text.unicodeScalars {
            guard needsEscape(scalar) else {
                result.unicodeScalars.append(scalar)
                continue
            }
            switch scalar {
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            default: result += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            }
        }
        return result
    }

    static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0..<0x20, 0x7F...0x9F: return true
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: return true
        default: return false
        }
    }
}

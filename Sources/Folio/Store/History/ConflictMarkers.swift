/// A file with git's conflict markers taken apart into its sides (``DataFileMerge/resolve(_:path:)``):
/// the lines outside the conflicts belong to every side; between `<<<<<<<` and `=======` (or
/// `|||||||`) to ours, between `|||||||` and `=======` to the base (diff3 style), between `=======`
/// and `>>>>>>>` to theirs.
enum ConflictMarkers {
    struct Sides {
        var ours: [UInt8] = []
        var theirs: [UInt8] = []
        /// Present when every conflict shows its base (`|||||||`).
        var base: [UInt8]?
    }

    private enum Part { case outside, ours, base, theirs }

    static func split(_ bytes: [UInt8], path: String) throws(FolioError) -> Sides {
        var sides = Sides()
        var base: [UInt8] = []
        var part = Part.outside
        var conflicts = 0, withBase = 0
        var lineNumber = 0, opened = 0
        var start = 0
        while start < bytes.count {
            lineNumber += 1
            var end = start
            while end < bytes.count && bytes[end] != 0x0A { end += 1 }
            let next = min(end + 1, bytes.count)
            let line = bytes[start..<next]
            func marker(_ byte: UInt8) -> Bool {
                line.count >= 7 && line.prefix(7).allSatisfy { $0 == byte } && (line.count == 7 || [0x20, 0x0A, 0x0D].contains(line[start + 7]))
            }
            switch part {
            case .outside where marker(UInt8(ascii: "<")):
                part = .ours
                opened = lineNumber
                conflicts += 1
            case .outside where marker(UInt8(ascii: "=")) || marker(UInt8(ascii: ">")) || marker(UInt8(ascii: "|")):
                throw FolioError(.corruptFile, "a conflict marker outside a conflict", path: path, line: lineNumber, column: 1)
            case .outside:
                sides.ours += line
                sides.theirs += line
                base += line
            case .ours where marker(UInt8(ascii: "|")):
                part = .base
                withBase += 1
            case .ours where marker(UInt8(ascii: "=")), .base where marker(UInt8(ascii: "=")):
                part = .theirs
            case .ours:
                sides.ours += line
            case .base:
                base += line
            case .theirs where marker(UInt8(ascii: ">")):
                part = .outside
            case .theirs:
                sides.theirs += line
            }
            start = next
        }
        guard part == .outside else {
            throw FolioError(.corruptFile, "the conflict opened here is never closed with >>>>>>>", path: path, line: opened, column: 1)
        }
        guard conflicts > 0 else { throw FolioError(.corruptFile, "the file has no conflict markers to resolve", path: path, line: 1, column: 1) }
        if withBase == conflicts { sides.base = base }
        return sides
    }
}

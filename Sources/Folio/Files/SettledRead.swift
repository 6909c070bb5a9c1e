internal import Foundation

/// Reading a data file a person's editor may be saving at that very instant.
///
/// Editors save in steps: nano and `backupcopy=yes` vim truncate the file and write it again in
/// place, other tools write it in pieces, a sync tool replaces it as it arrives. A read that lands
/// between two steps sees an empty file, or one cut short, which is no one's intent. So a data
/// file that does not parse, and that changed in the last ``recentChange`` (someone may be
/// writing it), is read again after short waits (about 0.4 s in all) until it parses; only one
/// that still does not is reported as broken, with its file, line and column, as before. A file
/// that has not changed for longer is broken for good, and is reported at once.
enum SettledRead {
    /// How recently a file must have changed to be waited for.
    static let recentChange: Int64 = 2_000_000_000
    /// The waits between reads, in milliseconds.
    static let waits = [15, 30, 60, 120, 200]

    /// Reads `path`, and reads it again while it does not parse and is being written.
    /// - Parameter parses: Whether bytes are a whole file (parsing them as the caller will); it is
    ///   called on the bytes returned, last.
    /// - Returns: The last bytes read and their identity, nil if the file does not exist.
    static func read(
        _ path: String, fileSystem: FileSystem,
        parses: ([UInt8]) -> Bool
    ) throws(FolioError) -> (bytes: [UInt8], identity: FileIdentity)? {
        guard var read = try fileSystem.read(path) else { return nil }
        var waits = Self.waits[...]
        // `parses` always sees the bytes returned last.
        while !parses(read.bytes), isRecent(read.identity), let wait = waits.popFirst() {
            Thread.sleep(forTimeInterval: Double(wait) / 1000)
            guard let again = try fileSystem.read(path) else { return nil }
            read = again
        }
        return read
    }

    static func isRecent(_ identity: FileIdentity) -> Bool {
        FileIdentity.now - identity.lastChange < recentChange
    }
}

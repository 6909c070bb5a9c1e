/// Durable atomic replacement of a whole file.
///
/// The new content is written to a fresh file in the store's temp folder (`.folio/tmp/`), flushed
/// with fsync (`F_FULLFSYNC` on Apple platforms), and renamed over the target. The rename replaces
/// the target atomically: a reader, a copy or a crash sees the old file or the new one, never a
/// mixture. The rename itself becomes durable when the target's directory is synced, which the
/// caller does once for all files it replaced in that directory (``FileSystem/syncDirectory(_:)``).
///
/// A crash at any step leaves the target untouched or replaced, plus possibly a temp file that
/// the next open removes.
struct AtomicFile {
    let fileSystem: FileSystem
    static let counter = Counter()

    /// Writes `bytes` to `relative` by temp file, fsync and rename. Does not sync the directory.
    /// - Parameter synced: False for derived data that checks itself when read (the field
    ///   index's checksums): the rename is still atomic for readers and copies, and a power cut
    ///   may leave a damaged file, which its reader rebuilds.
    func replace(_ relative: String, with bytes: [UInt8], synced: Bool = true) throws(FolioError) {
        let temp = StoreLayout.tempFolder + "/" + Self.counter.nextName(for: FileSystem.name(of: relative))
        _ = try fileSystem.writeNewFile(temp, bytes, sync: synced ? .all : .none, for: relative)
        do {
            try fileSystem.rename(temp, to: relative)
        } catch {
            // Best effort: a temp file left behind is removed by the next open.
            _ = Platform.unlink(fileSystem.absolute(temp))
            throw error
        }
    }
}

extension AtomicFile {
    /// Unique temp names within this process; the process id separates processes.
    final class Counter: @unchecked Sendable {
        private var value = 0
        private let lock = NSLockShim()

        func nextName(for base: String) -> String {
            let number = lock.withLock { () -> Int in
                value += 1; return value
            }
            return "\(Platform.processID)-\(number)-\(base)"
        }
    }
}

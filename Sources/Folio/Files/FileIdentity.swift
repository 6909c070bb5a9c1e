internal import Foundation

/// What Folio remembers of a file it read, to notice cheaply that it changed since: a new inode
/// (atomic rename, as Folio, rsync and most editors save), a new size, or a new modification or
/// status-change time (an edit in place).
struct FileIdentity: Hashable, Sendable {
    var device: UInt64
    var inode: UInt64
    var size: Int64
    var modified: Int64
    var changed: Int64
    var isDirectory: Bool

    /// When the file last changed, content or status, in nanoseconds since 1970.
    var lastChange: Int64 { max(changed, modified) }

    /// Now, in nanoseconds since 1970, as file times count.
    static var now: Int64 { Int64((Date().timeIntervalSince1970 * 1e9).rounded(.down)) }
}

/// One I/O step that changes the disk, as the file-system layer is about to take it. Tests hook
/// these to fail or stop (simulate a crash) at any single write, sync, rename, unlink, mkdir or
/// truncate. Paths are relative to the store.
enum IOStep: Sendable, Equatable, CustomStringConvertible {
    /// Reading a whole file (not disk-changing; lets tests count what is read).
    case read(String)
    case create(String)
    case write(String)
    case sync(String)
    /// One barrier that makes everything written to the store's file system before it durable,
    /// files and folders alike (Linux `syncfs`).
    case syncFileSystem
    case rename(String, String)
    case unlink(String)
    case makeDirectory(String)
    case truncate(String)

    var description: String {
        switch self {
        case .read(let path): "read \(path)"
        case .create(let path): "create \(path)"
        case .write(let path): "write \(path)"
        case .sync(let path): "sync \(path)"
        case .syncFileSystem: "sync the file system"
        case .rename(let from, let to): "rename \(from) -> \(to)"
        case .unlink(let path): "unlink \(path)"
        case .makeDirectory(let path): "mkdir \(path)"
        case .truncate(let path): "truncate \(path)"
        }
    }
}

/// Called before every disk-changing step (and every whole-file read); throwing makes the step fail with that error.
typealias IOHook = @Sendable (IOStep) throws(FolioError) -> Void

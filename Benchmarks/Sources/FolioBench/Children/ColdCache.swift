import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Makes the next read of a store cold: drops the kernel's page, dentry and inode caches
/// (`sync; echo 3 > /proc/sys/vm/drop_caches`, which needs root), or, where that is not allowed,
/// asks the kernel to drop each of the store's files from its page cache (`posix_fadvise
/// DONTNEED`, which keeps directory and inode caches warm).
enum ColdCache {
    enum Method: String, Sendable {
        case dropCaches = "drop_caches (page cache, dentries and inodes)"
        case fadvise = "posix_fadvise(DONTNEED) of the store's files (dentries and inodes stay cached)"
        case none = "none (caches warm)"
    }

    static func drop(_ path: String, allowDropCaches: Bool) -> Method {
        sync()
        if allowDropCaches, let handle = FileHandle(forWritingAtPath: "/proc/sys/vm/drop_caches") {
            defer { handle.closeFile() }
            do {
                try handle.write(contentsOf: Data("3\n".utf8))
                return .dropCaches
            } catch {
                // Not allowed here (a container without that privilege): fall back below.
            }
        }
        #if os(Linux)
        var files: [String] = [path]
        if let enumerator = FileManager.default.enumerator(atPath: path) {
            for case let relative as String in enumerator { files.append(path + "/" + relative) }
        }
        for sibling in [path + "-wal", path + "-shm"] where FileManager.default.fileExists(atPath: sibling) { files.append(sibling) }
        for file in files {
            let fd = open(file, O_RDONLY)
            guard fd >= 0 else { continue }
            _ = posix_fadvise(fd, 0, 0, Int32(POSIX_FADV_DONTNEED))
            close(fd)
        }
        return .fadvise
        #else
        return .none
        #endif
    }
}

extension ColdCache {
    /// Writes every dirty page out (`sync`) before commits are measured: the writeback of files
    /// just seeded or copied would otherwise land in the first commits' syncs, as another
    /// writer's would.
    static func settle() {
        sync()
    }

    /// Reads every file under `path` (or the file at `path`) once, not timed: the next reads find
    /// them in the page cache whatever ran before (a cold row drops the caches).
    static func warm(_ path: String) {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else { return }
        let files =
            isFolder.boolValue
            ? (FileManager.default.enumerator(atPath: path)?.compactMap { ($0 as? String).map { path + "/" + $0 } } ?? [])
            : [path]
        // Folders and vanished files read as nil; only the page cache matters here.
        for file in files { _ = FileManager.default.contents(atPath: file) }
    }
}

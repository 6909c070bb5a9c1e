import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The disk's own limits, measured in the folder the stores live in: how many durable appends and
/// durable file replacements per second this machine can do at all. Each store's figure can be
/// read as a fraction of these.
enum DiskLimits {
    /// `count` times: `pwrite` 256 bytes at the end of a file, then `fdatasync`. A journal commit
    /// that grows its file (the size change must reach the disk too).
    static func appendAndSync(_ folder: URL, count: Int) throws -> Duration {
        try withFile(folder, "append") { fd in
            let record = [UInt8](repeating: 0x61, count: 256)
            let start = ContinuousClock.now
            for index in 0..<count {
                try pwriteAll(fd, record, offset: off_t(index * 256))
                try check(fdatasync(fd), "fdatasync")
            }
            return ContinuousClock.now - start
        }
    }

    /// `count` times: `pwrite` 256 bytes into a file already that large (written and synced
    /// first), then `fdatasync`. A commit that does not change the file's size: SQLite's WAL
    /// once it is reused after a checkpoint.
    static func overwriteAndSync(_ folder: URL, count: Int) throws -> Duration {
        try withFile(folder, "overwrite") { fd in
            let record = [UInt8](repeating: 0x62, count: 256)
            let zeros = [UInt8](repeating: 0, count: count * 256)
            try pwriteAll(fd, zeros, offset: 0)
            try check(fsync(fd), "fsync")
            let start = ContinuousClock.now
            for index in 0..<count {
                try pwriteAll(fd, record, offset: off_t(index * 256))
                try check(fdatasync(fd), "fdatasync")
            }
            return ContinuousClock.now - start
        }
    }

    /// `count` times: write a 4 KiB temp file, `fsync` it, `rename` it over the target, `fsync`
    /// the folder. The durable replacement of one small file (a Folio partition file).
    static func replaceFile(_ folder: URL, count: Int) throws -> Duration {
        let directory = folder.appendingPathComponent("replace", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let target = directory.appendingPathComponent("day.json").path
        let temp = directory.appendingPathComponent(".day.json.tmp").path
        let content = [UInt8](repeating: 0x63, count: 4096)
        let dirFD = open(directory.path, O_RDONLY | O_DIRECTORY)
        try check(dirFD, "open \(directory.path)")
        defer { close(dirFD) }
        let start = ContinuousClock.now
        for _ in 0..<count {
            let fd = open(temp, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            try check(fd, "open \(temp)")
            do {
                try pwriteAll(fd, content, offset: 0)
                try check(fsync(fd), "fsync")
            } catch {
                close(fd)
                throw error
            }
            close(fd)
            try check(rename(temp, target), "rename")
            try check(fsync(dirFD), "fsync(dir)")
        }
        return ContinuousClock.now - start
    }

    /// Opens a new file `name` in `folder` for `body`, then closes and removes it.
    static func withFile<Result>(_ folder: URL, _ name: String, _ body: (Int32) throws -> Result) throws -> Result {
        let path = folder.appendingPathComponent(name).path
        let fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0o644)
        try check(fd, "open \(path)")
        defer {
            close(fd)
            unlink(path)
        }
        return try body(fd)
    }

    static func pwriteAll(_ fd: Int32, _ bytes: [UInt8], offset: off_t) throws {
        var done = 0
        while done < bytes.count {
            let written = bytes.withUnsafeBytes { buffer in
                pwrite(fd, buffer.baseAddress! + done, bytes.count - done, offset + off_t(done))
            }
            if written < 0 && errno == EINTR { continue }
            try check(written < 0 ? -1 : 0, "pwrite")
            done += written
        }
    }

    static func check<T: BinaryInteger>(_ result: T, _ what: String) throws {
        if result < 0 { throw BenchError("\(what) failed: \(String(cString: strerror(errno)))") }
    }
}

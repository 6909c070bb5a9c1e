import Foundation
import Testing

/// A real, small file system: a tmpfs of a few MiB mounted on a temp folder (Linux, as root, as
/// in CI), for tests of a full or read-only disk. Unmounted when the value goes away.
final class SmallDisk: @unchecked Sendable {
    let url: URL
    private var filler: FileHandle?

    /// Mounts the file system; throws, with `mount`'s message, where that is not permitted.
    init(megabytes: Int) throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("folio-disk-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        try Self.run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(megabytes)m,mode=0755", "tmpfs", url.path])
    }

    deinit {
        try? filler?.close()
        try? Self.run("/bin/umount", ["-l", url.path])
        try? FileManager.default.removeItem(at: url)
    }

    /// Fills the disk: a file grows until the file system says ENOSPC.
    func fill() throws {
        let path = url.appendingPathComponent("filler")
        _ = FileManager.default.createFile(atPath: path.path, contents: nil)
        let handle = try FileHandle(forWritingTo: path)
        filler = handle
        for chunk in [1 << 16, 4096, 512, 1] {
            let data = Data(repeating: 0x46, count: chunk)
            for _ in 0..<100_000 {
                do { try handle.write(contentsOf: data) } catch { break }
            }
        }
    }

    /// Frees the space `fill()` took.
    func free() throws {
        try filler?.close()
        filler = nil
        try FileManager.default.removeItem(at: url.appendingPathComponent("filler"))
    }

    /// Remounts the file system read-only (or back to read-write).
    func remount(readOnly: Bool) throws {
        try Self.run("/bin/mount", ["-o", "remount,\(readOnly ? "ro" : "rw")", url.path])
    }

    static func run(_ tool: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            throw CocoaError(.fileWriteNoPermission, userInfo: [NSLocalizedDescriptionKey: "\(tool) \(arguments.joined(separator: " ")): \(text)"])
        }
    }
}

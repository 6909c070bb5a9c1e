@testable import Folio
import Foundation
#if canImport(Glibc)
import Glibc
private let systemWrite = Glibc.write
#else
import Darwin
private let systemWrite = Darwin.write
#endif
import Testing

/// A fresh folder under the system's temp directory, removed when the value goes away.
final class TemporaryFolder: @unchecked Sendable {
    let url: URL

    /// - Parameter onMemoryFileSystem: Under `/dev/shm` (tmpfs) when it exists, for process-kill
    ///   tests that create thousands of files.
    init(_ name: String = "store", onMemoryFileSystem: Bool = false) {
        let memory = URL(fileURLWithPath: "/dev/shm")
        let base = onMemoryFileSystem && FileManager.default.isWritableFile(atPath: memory.path) ? memory : FileManager.default.temporaryDirectory
        url =
            base
            .appendingPathComponent("folio-tests-\(UUID().uuidString)")
            .appendingPathComponent(name)
        try! FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
    }

    deinit {
        // `rm -rf` is an order of magnitude faster than FileManager on Linux for big trees. Started
        // through `posix_spawn` (Shell.run), not Foundation's `Process`: on Linux its launch lists
        // `/proc/self/fd` copying 256 bytes per entry, past the end of its buffer once the test
        // process holds some 1,360 descriptors, and every test's folder goes through here.
        _ = Shell.run("/bin/rm", ["-rf", url.deletingLastPathComponent().path], timeout: 600)
    }

    func file(_ relative: String) -> URL { url.appendingPathComponent(relative) }

    func bytes(_ relative: String) throws -> Data { try Data(contentsOf: file(relative)) }

    func text(_ relative: String) throws -> String { String(decoding: try bytes(relative), as: UTF8.self) }

    func exists(_ relative: String) -> Bool { FileManager.default.fileExists(atPath: file(relative).path) }

    func write(_ text: String, to relative: String) throws {
        let url = file(relative)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: url)
    }

    /// Writes a file with plain POSIX calls (no fsync), for tests that create thousands. The
    /// parent folder must exist.
    func writeQuickly(_ text: String, to relative: String) throws {
        let fd = open(file(relative).path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard fd >= 0 else { throw CocoaError(.fileWriteUnknown) }
        defer { close(fd) }
        let bytes = Array(text.utf8)
        guard bytes.withUnsafeBytes({ systemWrite(fd, $0.baseAddress, $0.count) }) == bytes.count else {
            throw CocoaError(.fileWriteUnknown)
        }
    }

    /// Every file below the folder, relative paths, sorted.
    func allFiles() -> [String] {
        let root = url.standardizedFileURL.path
        guard let walker = FileManager.default.enumerator(atPath: root) else { return [] }
        var files: [String] = []
        while let path = walker.nextObject() as? String {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: root + "/" + path, isDirectory: &isDirectory), !isDirectory.boolValue {
                files.append(path)
            }
        }
        return files.sorted()
    }
}

extension Store.Configuration {
    /// A configuration for tests: no idle checkpoint surprises unless asked for.
    static func testing(
        durability: Durability = .full, checkpointDelay: Duration = .seconds(3600),
        hook: IOHook? = nil, log: LogHandler? = nil
    ) -> Store.Configuration {
        var configuration = Store.Configuration(durability: durability, logHandler: log)
        configuration.checkpointDelay = checkpointDelay
        configuration.ioHook = hook
        return configuration
    }
}

/// Collects log messages, for tests that check what was reported.
final class LogRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [LogMessage] = []

    var messages: [LogMessage] { lock.withLock { stored } }

    var handler: LogHandler {
        { message in self.lock.withLock { self.stored.append(message) } }
    }
}

/// Counts and records I/O steps, for tests that check what was read or written.
final class IORecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [IOStep] = []

    var steps: [IOStep] { lock.withLock { stored } }

    func reset() { lock.withLock { stored = [] } }

    var hook: IOHook {
        { step throws(FolioError) in self.lock.withLock { self.stored.append(step) } }
    }

    var reads: [String] {
        steps.compactMap { if case .read(let path) = $0 { return path } else { return nil } }
    }
}

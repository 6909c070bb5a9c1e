import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The machine's floors under three of Folio's targets (issue 29): the same work done bare, with
/// system calls only, on the same disk and in the same run as the row it bounds.
extension DiskLimits {
    /// A commit's floor, in a child process (`__child floor overwrite`): `count` times `pwrite`
    /// 256 bytes into a file already that large, then `fdatasync` — the journal's commit without
    /// the store around it (the journal keeps zeros past its end, so a commit overwrites and its
    /// `fdatasync` writes no inode). The file is written and synced first, then everything dirty
    /// is written out (`sync`), as before Folio's commits are measured. Returns the cost per write
    /// as ``ResourceUsage/line(since:transactions:)`` does for a commit.
    static func overwriteCost(_ folder: URL, count: Int) throws -> String {
        try withFile(folder, "overwrite-cost") { fd in
            let record = [UInt8](repeating: 0x62, count: 256)
            try pwriteAll(fd, [UInt8](repeating: 0, count: count * 256), offset: 0)
            try check(fsync(fd), "fsync")
            ColdCache.settle()
            let start = ResourceUsage.now()
            for index in 0..<count {
                try pwriteAll(fd, record, offset: off_t(index * 256))
                try check(fdatasync(fd), "fdatasync")
            }
            return ResourceUsage.now().line(since: start, transactions: count)
        }
    }

    /// The bulk import's outbox floor: `files` (names and bytes) created in `folder` (made
    /// before the clock) as Folio's checkpoint writes its command files on Linux: each opened with
    /// `O_CREAT | O_EXCL`, written and closed without a sync of its own; then one `syncfs`, which
    /// makes every file's bytes and the folder's entries durable (Folio's durability barrier);
    /// then `fsync` of the folder (covered by `syncfs` already: nearly free). Where there is no
    /// `syncfs`, each file is `fsync`ed before it is closed instead, as Folio does there.
    static func createFiles(_ folder: URL, files: [(name: String, bytes: [UInt8])]) throws -> Duration {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let directory = folder.path
        let start = ContinuousClock.now
        for file in files {
            let path = directory + "/" + file.name
            let fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o644)
            try check(fd, "open \(path)")
            do {
                try pwriteAll(fd, file.bytes, offset: 0)
                if syncFileSystem == nil { try check(fsync(fd), "fsync") }
            } catch {
                close(fd)
                throw error
            }
            try check(close(fd), "close \(path)")
        }
        let dirFD = open(directory, O_RDONLY | O_DIRECTORY)
        try check(dirFD, "open \(directory)")
        defer { close(dirFD) }
        if let syncFileSystem { try check(syncFileSystem(dirFD), "syncfs") }
        try check(fsync(dirFD), "fsync(dir)")
        return ContinuousClock.now - start
    }

    /// `syncfs`, looked up at run time (Glibc's Swift module does not export it); nil where the
    /// platform has none.
    static let syncFileSystem: (@convention(c) (Int32) -> Int32)? = {
        #if os(Linux)
        return dlsym(nil, "syncfs").map { unsafeBitCast($0, to: (@convention(c) (Int32) -> Int32).self) }
        #else
        return nil
        #endif
    }()

    /// The system calls a fresh Folio process makes before it trusts its saved id index (the
    /// duplicate-id guarantee: the root package's `IdLocator.locate` and `IndexFile.lookUp`): list
    /// the collection's folder, list each month folder in it, `stat` every day file the listings
    /// name. The month folders are listed and the files `stat`ed on as many threads as Folio uses
    /// for them (the active processors, at most 8): on cold inodes each call waits for the disk.
    /// Run in a child process (`__child floor idcalls`) after the caches are dropped. Nothing else:
    /// reading the saved index and the todo's day file is work GRDB's get has an equivalent of.
    static func idGuaranteeCalls(_ store: URL, collection: String) throws -> (Duration, IdGuaranteeCalls) {
        let root = store.path + "/" + collection
        let threads = min(max(ProcessInfo.processInfo.activeProcessorCount, 1), 8)
        let start = ContinuousClock.now
        let months = try entries(root).filter { $0.isDirectory && isMonthFolder($0.name) }.map(\.name).sorted()
        let listings = parallelMap(months, threads: threads) { month in Result { try entries(root + "/" + month) } }
        var files: [String] = []
        // In name order, as Folio `stat`s them (its partitions' order): files made day after day
        // have neighbouring inodes, so a thread's run of names reads neighbouring inode blocks.
        for (month, listing) in zip(months, listings) {
            for name in try listing.get().filter({ !$0.isDirectory && $0.name.hasSuffix(".json") }).map(\.name).sorted() {
                files.append(root + "/" + month + "/" + name)
            }
        }
        let failures = parallelMap(files, threads: threads) { path in
            var info = stat()
            return stat(path, &info) == 0 ? Int32(0) : errno
        }
        let elapsed = ContinuousClock.now - start
        if let index = failures.firstIndex(where: { $0 != 0 }) {
            throw BenchError("stat \(files[index]) failed: \(String(cString: strerror(failures[index])))")
        }
        return (elapsed, IdGuaranteeCalls(folders: 1 + months.count, files: files.count, threads: threads))
    }

    /// What ``idGuaranteeCalls(_:collection:)`` did.
    struct IdGuaranteeCalls: Sendable {
        /// Folders listed (`opendir`, `readdir` to the end, `closedir`): the collection's and its months'.
        var folders: Int
        /// Files `stat`ed.
        var files: Int
        var threads: Int
    }

    /// `YYYY-MM`.
    private static func isMonthFolder(_ name: String) -> Bool {
        let characters = Array(name.utf8)
        return characters.count == 7 && characters[4] == UInt8(ascii: "-")
            && characters.enumerated().allSatisfy { $0.offset == 4 || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0.element) }
    }

    /// A folder's entries (without "." and ".."), as Folio lists one: `opendir`, `readdir`, and a
    /// `stat` only where the entry's type is unknown.
    private static func entries(_ path: String) throws -> [(name: String, isDirectory: Bool)] {
        guard let dir = opendir(path) else { throw BenchError("opendir \(path) failed: \(String(cString: strerror(errno)))") }
        defer { closedir(dir) }
        var result: [(String, Bool)] = []
        while let entry = readdir(dir) {
            let name = withUnsafePointer(to: entry.pointee.d_name) { pointer in
                pointer.withMemoryRebound(to: CChar.self, capacity: Int(NAME_MAX) + 1) { String(cString: $0) }
            }
            if name == "." || name == ".." { continue }
            var isDirectory = Int32(entry.pointee.d_type) == Int32(DT_DIR)
            if Int32(entry.pointee.d_type) == Int32(DT_UNKNOWN) {
                var info = stat()
                if stat(path + "/" + name, &info) == 0 { isDirectory = (info.st_mode & S_IFMT) == S_IFDIR }
            }
            result.append((name, isDirectory))
        }
        return result
    }

    /// `transform` of each element on `threads` threads, as the root package's `parallelMap`
    /// does it: each thread takes the next run of neighbouring elements (a 32nd of a thread's
    /// share) until none is left.
    private static func parallelMap<Element: Sendable, Mapped: Sendable>(
        _ elements: [Element], threads: Int, _ transform: @Sendable (Element) -> Mapped
    ) -> [Mapped] {
        guard elements.count > 1, threads > 1 else { return elements.map(transform) }
        let slots = Slots<Mapped>(count: elements.count)
        let width = min(threads, elements.count)
        let step = max(1, elements.count / (width * 32))
        DispatchQueue.concurrentPerform(iterations: width) { _ in
            while case let start = slots.take(step), start < elements.count {
                for index in start..<min(start + step, elements.count) { slots.set(index, transform(elements[index])) }
            }
        }
        return slots.values
    }

    /// The results of ``parallelMap(_:threads:_:)``, one slot per element, and the next element
    /// to take.
    private final class Slots<Value: Sendable>: @unchecked Sendable {
        private let lock = NSLock()
        private var slots: [Value?]
        private var next = 0

        init(count: Int) { slots = Array(repeating: nil, count: count) }

        /// The first of the next `count` elements, which the caller then owns.
        func take(_ count: Int) -> Int {
            lock.withLock {
                defer { next += count }
                return next
            }
        }

        func set(_ index: Int, _ value: Value) { lock.withLock { slots[index] = value } }

        var values: [Value] { lock.withLock { slots.map { $0! } } }
    }
}

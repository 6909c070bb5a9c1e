internal import Foundation

/// A partition file as read and parsed, before the store takes it in: the part of a first load
/// that touches only the file, so many files can be fetched at once on every core
/// (`StoreEngine.fetch` over many partitions) and taken in one by one, in order.
struct FetchedFile: Sendable {
    var bytes: [UInt8]
    var identity: FileIdentity
    /// The parsed file, or why it does not parse.
    var contents: Result<PartitionFile.Contents, FolioError>
    /// Whether the bytes are the newest version Folio wrote (`.folio/versions/`): then the file is
    /// not a person's save and needs no reconciling. False when unknown.
    var isNewestKept = false
    /// The bytes' hash, when checking the kept versions computed it.
    var hash: ContentHash?

    /// Reads and parses a partition file; nil when it does not exist.
    /// A file caught in the middle of a person's save is read again (``SettledRead``).
    static func fetch(_ path: String, fileSystem: FileSystem) throws(FolioError) -> FetchedFile? {
        var contents: Result<PartitionFile.Contents, FolioError>?
        let read = try SettledRead.read(path, fileSystem: fileSystem) { bytes in
            do throws(FolioError) { contents = .success(try PartitionFile.decode(bytes, path: path)) } catch { contents = .failure(error) }
            if case .success? = contents { return true }
            return false
        }
        guard let (bytes, identity) = read else { return nil }
        return parse(bytes, identity: identity, path: path, fileSystem: fileSystem, parsed: contents)
    }

    /// Parses a partition file's bytes as just read.
    /// - Parameter kept: The bytes' kept-version check when the caller made it already.
    /// - Parameter parsed: The bytes already parsed, when the caller did.
    static func parse(
        _ bytes: [UInt8], identity: FileIdentity, path: String, fileSystem: FileSystem,
        checkingKeptVersions: Bool = false, kept: KeptCheck? = nil,
        parsed: Result<PartitionFile.Contents, FolioError>? = nil
    ) -> FetchedFile {
        let contents = parsed ?? Result { () throws(FolioError) in try PartitionFile.decode(bytes, path: path) }
        var file = FetchedFile(bytes: bytes, identity: identity, contents: contents)
        if checkingKeptVersions, case .success = contents {
            let check = kept ?? KeptCheck(bytes, path: path, fileSystem: fileSystem)
            file.hash = check.hash
            file.isNewestKept = check.isNewest
        }
        return file
    }

    /// A file's bytes against `.folio/versions/`: their hash, and whether they are the newest
    /// version Folio wrote (then they have the format's shape and are no person's save; false
    /// when unknown, and the store reconciles the file as usual and reports what fails there).
    struct KeptCheck: Sendable {
        var hash: ContentHash
        var isNewest: Bool

        init(_ bytes: [UInt8], path: String, fileSystem: FileSystem, written: WrittenHashes? = nil) {
            hash = ContentHash(bytes)
            do {
                isNewest =
                    try written?.isLastWritten(hash, at: path) == true
                    || KeptVersions(fileSystem: fileSystem).versions(of: path).last { !$0.isEdit }?.hash == hash
            } catch {
                isNewest = false
            }
        }
    }
}

/// Runs `transform` on every element on up to `width` threads; the results in the elements' order.
/// The threads take the elements a few at a time as they go, so one that started late or drew
/// slow elements does not leave the others waiting at the end.
func parallelMap<T: Sendable, R: Sendable>(_ elements: [T], width: Int, _ transform: @Sendable (T) -> R) -> [R] {
    guard elements.count > 1, width > 1 else { return elements.map(transform) }
    let results = ParallelSlots<R>(count: elements.count)
    let threads = min(width, elements.count)
    let step = max(1, elements.count / (threads * 32))
    let next = NextIndex()
    DispatchQueue.concurrentPerform(iterations: threads) { _ in
        while case let start = next.take(step), start < elements.count {
            for index in start..<min(start + step, elements.count) { results.set(index, transform(elements[index])) }
        }
    }
    return results.values()
}

/// The next element of a ``parallelMap`` to take.
private final class NextIndex: @unchecked Sendable {
    private let lock = NSLock()
    private var next = 0

    /// The first of the next `count` elements, which the caller then owns.
    func take(_ count: Int) -> Int {
        lock.lock()
        defer { lock.unlock() }
        let start = next
        next += count
        return start
    }
}

/// One slot per element, each written by exactly one thread of `parallelMap` and read after all
/// of them finished (`concurrentPerform` returns only then), so no two accesses race. The results
/// are moved out, not copied (a query's may be thousands of files' worth).
private final class ParallelSlots<R: Sendable>: @unchecked Sendable {
    private let slots: UnsafeMutableBufferPointer<R?>

    init(count: Int) {
        slots = .allocate(capacity: count)
        slots.initialize(repeating: nil)
    }

    deinit {
        slots.deinitialize()
        slots.deallocate()
    }

    func set(_ index: Int, _ value: R) { slots[index] = value }

    /// Every slot's value, each taken out of its slot (which is left empty). Every slot holds
    /// one: `concurrentPerform` ran every iteration, and each took its elements to the end.
    func values() -> [R] {
        slots.indices.map { slots[$0].take()! }
    }
}

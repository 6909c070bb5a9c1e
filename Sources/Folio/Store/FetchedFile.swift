internal import Dispatch

/// A partition file as read and parsed, before the store takes it in: the part of a first load
/// that touches only the file, so many files can be fetched at once on every core
/// (`StoreState.fetch` over many partitions) and taken in one by one, in order.
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
    static func fetch(_ path: String, fileSystem: FileSystem, checkingKeptVersions: Bool = false) throws(FolioError) -> FetchedFile? {
        guard let (bytes, identity) = try fileSystem.read(path) else { return nil }
        return parse(bytes, identity: identity, path: path, fileSystem: fileSystem, checkingKeptVersions: checkingKeptVersions)
    }

    /// Parses a partition file's bytes as just read.
    static func parse(_ bytes: [UInt8], identity: FileIdentity, path: String, fileSystem: FileSystem,
                      checkingKeptVersions: Bool = false) -> FetchedFile {
        let contents: Result<PartitionFile.Contents, FolioError>
        do { contents = .success(try PartitionFile.decode(bytes, path: path)) } catch { contents = .failure(error) }
        var file = FetchedFile(bytes: bytes, identity: identity, contents: contents)
        if checkingKeptVersions, case .success = contents {
            let hash = ContentHash(bytes)
            file.hash = hash
            file.isNewestKept = newestKept(path, fileSystem: fileSystem) == hash
        }
        return file
    }

    /// Whether `bytes` are the newest version of `path` that Folio wrote (`.folio/versions/`):
    /// then they have the format's shape and are no person's save. False when unknown.
    static func isNewestKept(_ bytes: [UInt8], path: String, fileSystem: FileSystem) -> Bool {
        guard let newest = newestKept(path, fileSystem: fileSystem) else { return false }
        return newest == ContentHash(bytes)
    }

    /// The hash of the newest version of `path` Folio wrote, or nil when there is none or it is
    /// unknown (the store then reconciles the file as usual, and reports what fails there).
    private static func newestKept(_ path: String, fileSystem: FileSystem) -> ContentHash? {
        do {
            return try KeptVersions(fileSystem: fileSystem).versions(of: path).last { !$0.isEdit }?.hash
        } catch {
            return nil
        }
    }
}

/// Runs `transform` on every element on up to `width` threads; the results in the elements' order.
func parallelMap<T: Sendable, R: Sendable>(_ elements: [T], width: Int, _ transform: @Sendable (T) -> R) -> [R] {
    guard elements.count > 1, width > 1 else { return elements.map(transform) }
    let results = ParallelSlots<R>(count: elements.count)
    let chunks = min(width, elements.count)
    DispatchQueue.concurrentPerform(iterations: chunks) { chunk in
        var index = chunk
        while index < elements.count {
            results.set(index, transform(elements[index]))
            index += chunks
        }
    }
    return results.values()
}

/// One slot per element, each written by exactly one thread of `parallelMap` and read after all
/// of them finished (`concurrentPerform` returns only then), so no two accesses race.
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

    func values() -> [R] { slots.map { $0! } }
}

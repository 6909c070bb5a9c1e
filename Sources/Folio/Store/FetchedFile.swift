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
    /// - Parameter kept: The bytes' kept-version check when the caller made it already.
    static func parse(_ bytes: [UInt8], identity: FileIdentity, path: String, fileSystem: FileSystem,
                      checkingKeptVersions: Bool = false, kept: KeptCheck? = nil) -> FetchedFile {
        let contents: Result<PartitionFile.Contents, FolioError>
        do { contents = .success(try PartitionFile.decode(bytes, path: path)) } catch { contents = .failure(error) }
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
            if written?.isLastWritten(hash, at: path) == true {
                isNewest = true
                return
            }
            do {
                isNewest = try KeptVersions(fileSystem: fileSystem).versions(of: path).last { !$0.isEdit }?.hash == hash
            } catch {
                isNewest = false
            }
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

@testable import Folio
import FolioCrashSupport
import Foundation

/// A model of a disk that keeps only what POSIX promises across a power cut, fed with the I/O
/// steps a store takes (``IOStep``) and the bytes they left on the real disk.
///
/// The rules, taken from POSIX and not from Folio:
/// - A file's data is on stable storage only after an fsync/fdatasync of that file. A write not
///   yet synced may be lost, or torn: some of its 512-byte sectors reach the disk and others do
///   not (those beyond the old end then read as zeros).
/// - A directory entry (create, rename, unlink, mkdir) is on stable storage only after an fsync of
///   that directory. A rename within one directory is atomic; a rename between two directories
///   is two independent entry changes.
///
/// ``step(_:)`` must be called as each step is about to happen; the model completes the previous
/// step by reading what it left on disk, so the bytes need not travel through the hook.
struct PowerCutDisk {
    enum Node: Hashable { case file(Int), directory(Int) }

    enum Change {
        case write(offset: Int, bytes: [UInt8])
        case truncate(Int)
    }

    struct File {
        var durable: [UInt8] = []
        var current: [UInt8] = []
        /// Changes since the last sync, in order.
        var pending: [Change] = []
    }

    struct Directory {
        var durable: [String: Node] = [:]
        var current: [String: Node] = [:]
        /// Entry changes since the last sync, in order; each applies whole or not at all.
        var pending: [[(name: String, node: Node?)]] = []
    }

    /// One way a power cut can resolve what was not yet synced.
    struct Outcome {
        enum Fate { case kept, lost, tornFirstHalf, tornLastSectorOnly }
        /// Fate of pending file change (file, index); default `defaultKept`.
        var files: [Int: [Int: Fate]] = [:]
        /// Fate of pending directory change (directory, index): kept or lost.
        var directories: [Int: [Int: Bool]] = [:]
        var defaultKept: Bool
        var label: String
    }

    let root: String
    private(set) var files: [Int: File] = [:]
    private(set) var directories: [Int: Directory] = [0: Directory()]
    private var nextID = 1
    private var unfinished: IOStep?

    init(root: String) { self.root = root }

    // MARK: Recording

    mutating func step(_ step: IOStep) {
        finish()
        if case .read = step { return }
        unfinished = step
    }

    /// Completes the last step from what it left on disk.
    mutating func finish() {
        guard let step = unfinished else { return }
        unfinished = nil
        switch step {
        case .read: break
        case .create(let path):
            guard let (parent, name) = parentAndName(path) else { return }
            let id = newID()
            files[id] = File(durable: [], current: bytes(at: path), pending: [])
            change(parent, [(name, .file(id))])
        case .makeDirectory(let path):
            guard path != ".", let (parent, name) = parentAndName(path) else { return }
            let id = newID()
            directories[id] = Directory()
            change(parent, [(name, .directory(id))])
        case .write(let path), .truncate(let path):
            guard case .file(let id)? = lookup(path) else { return }
            let before = files[id]!.current
            let after = bytes(at: path)
            files[id]!.current = after
            if case .truncate = step {
                files[id]!.pending.append(.truncate(after.count))
            } else if let written = Self.difference(before, after) {
                files[id]!.pending.append(.write(offset: written.lowerBound, bytes: Array(after[written])))
            }
        case .sync(let path):
            switch lookup(path) {
            case .file(let id)?:
                files[id]!.durable = files[id]!.current
                files[id]!.pending = []
            case .directory(let id)?:
                directories[id]!.durable = directories[id]!.current
                directories[id]!.pending = []
            case nil: break
            }
        case .syncFileSystem:
            // syncfs: every earlier write, create, rename and unlink on the file system is durable.
            for id in files.keys {
                files[id]!.durable = files[id]!.current
                files[id]!.pending = []
            }
            for id in directories.keys {
                directories[id]!.durable = directories[id]!.current
                directories[id]!.pending = []
            }
        case .rename(let from, let to):
            guard let (source, sourceName) = parentAndName(from), let (target, targetName) = parentAndName(to),
                let node = lookup(from)
            else { return }
            if source == target {
                change(source, [(sourceName, nil), (targetName, node)])
            } else {
                change(target, [(targetName, node)])
                change(source, [(sourceName, nil)])
            }
        case .unlink(let path):
            guard let (parent, name) = parentAndName(path) else { return }
            change(parent, [(name, nil)])
        }
    }

    private mutating func newID() -> Int {
        defer { nextID += 1 }
        return nextID
    }

    private mutating func change(_ directory: Int, _ entries: [(name: String, node: Node?)]) {
        for (name, node) in entries { directories[directory]!.current[name] = node }
        directories[directory]!.pending.append(entries)
    }

    private func bytes(at path: String) -> [UInt8] {
        (try? [UInt8](Data(contentsOf: URL(fileURLWithPath: root + "/" + path)))) ?? []
    }

    /// The range of `after` that differs from `before` (what one pwrite changed), or nil.
    static func difference(_ before: [UInt8], _ after: [UInt8]) -> Range<Int>? {
        var start = 0
        while start < before.count && start < after.count && before[start] == after[start] { start += 1 }
        if after.count > before.count { return start..<after.count }
        guard start < after.count else { return nil }
        var end = after.count
        while end > start && before[end - 1] == after[end - 1] { end -= 1 }
        return start..<end
    }

    private func lookup(_ path: String) -> Node? {
        if path == "." || path.isEmpty { return .directory(0) }
        if path.hasPrefix("/") { return nil }
        var node = Node.directory(0)
        for part in path.split(separator: "/") {
            guard case .directory(let id) = node, let next = directories[id]?.current[String(part)] else { return nil }
            node = next
        }
        return node
    }

    private func parentAndName(_ path: String) -> (Int, String)? {
        guard !path.hasPrefix("/") else { return nil }
        let parent = FileSystem.parent(of: path)
        guard case .directory(let id)? = lookup(parent) else { return nil }
        return (id, FileSystem.name(of: path))
    }

    // MARK: Outcomes

    /// The ways a power cut now may resolve, at most `limit` of them (always the two extremes:
    /// everything unsynced lost, everything kept), the rest chosen with `random`.
    func outcomes(limit: Int, random: inout SplitMix64) -> [Outcome] {
        var result = [
            Outcome(defaultKept: false, label: "every unsynced change lost"),
            Outcome(defaultKept: true, label: "every unsynced change kept"),
        ]
        var others: [Outcome] = []
        for (id, file) in files.sorted(by: { $0.key < $1.key }) {
            for index in file.pending.indices {
                for fate in [Outcome.Fate.lost, .tornFirstHalf, .tornLastSectorOnly] {
                    others.append(Outcome(files: [id: [index: fate]], defaultKept: true, label: "file \(id) change \(index) \(fate)"))
                }
                others.append(Outcome(files: [id: [index: .kept]], defaultKept: false, label: "only file \(id) change \(index) kept"))
            }
        }
        for (id, directory) in directories.sorted(by: { $0.key < $1.key }) {
            for index in directory.pending.indices {
                others.append(Outcome(directories: [id: [index: false]], defaultKept: true, label: "directory \(id) change \(index) lost"))
                others.append(Outcome(directories: [id: [index: true]], defaultKept: false, label: "only directory \(id) change \(index) kept"))
            }
        }
        while result.count < limit && !others.isEmpty {
            result.append(others.remove(at: Int(random.next() % UInt64(others.count))))
        }
        return result
    }

    /// Writes the folder this outcome leaves into `folder` (which must not exist).
    func materialize(_ outcome: Outcome, into folder: String) throws {
        try write(directory: 0, outcome, to: folder)
    }

    private func write(directory id: Int, _ outcome: Outcome, to path: String) throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let directory = directories[id]!
        var entries = directory.durable
        for (index, change) in directory.pending.enumerated() where outcome.directories[id]?[index] ?? outcome.defaultKept {
            for (name, node) in change { entries[name] = node }
        }
        for (name, node) in entries {
            switch node {
            case .directory(let child): try write(directory: child, outcome, to: path + "/" + name)
            case .file(let file): try Data(contents(of: file, outcome)).write(to: URL(fileURLWithPath: path + "/" + name))
            }
        }
    }

    private func contents(of id: Int, _ outcome: Outcome) -> [UInt8] {
        let file = files[id]!
        var bytes = file.durable
        for (index, change) in file.pending.enumerated() {
            let fate = outcome.files[id]?[index] ?? (outcome.defaultKept ? .kept : .lost)
            switch (change, fate) {
            case (_, .lost): continue
            case (.truncate(let length), _):
                if bytes.count > length { bytes.removeSubrange(length...) } else { bytes += [UInt8](repeating: 0, count: length - bytes.count) }
            case (.write(let offset, let data), _):
                let end = offset + data.count
                if bytes.count < end { bytes += [UInt8](repeating: 0, count: end - bytes.count) }
                let sectors = Array(Set((offset..<end).map { $0 / 512 })).sorted()
                let kept: Set<Int> =
                    switch fate {
                    case .tornFirstHalf: Set(sectors.prefix(sectors.count / 2))
                    case .tornLastSectorOnly: [sectors.last!]
                    default: Set(sectors)
                    }
                for position in offset..<end where kept.contains(position / 512) { bytes[position] = data[position - offset] }
            }
        }
        return bytes
    }
}

/// The few most recent versions of each partition file, kept under `.folio/versions/` (FORMAT.md,
/// "`.folio/versions/`"), so that a file saved by an editor from an older buffer can be merged
/// three ways: the version the editor started from, what Folio wrote since, what the person saved.
///
/// `.folio/versions/<path of the file>/<order>-<hash>.json` for a version Folio wrote,
/// `<order>-<hash>.edit.json` for one a person saved: `order` (20 digits) grows with every
/// version kept, `hash` is the ``ContentHash`` of the bytes, which are exactly the file's. Folio
/// keeps every version it writes (before renaming it into place), every merge it makes and every
/// saved version it reads, at most ``limit`` per file. They are written by temp file and rename,
/// without fsync of their own (the version of a file a checkpoint is about to replace is made
/// durable by the checkpoint's barrier, before the replace): a version damaged by a power cut
/// fails its hash and is ignored. They are derived
/// data: deleting the folder only makes
/// Folio unable to merge a save made from an older buffer (it then takes the save as it is).
struct KeptVersions {
    static let folder = StoreLayout.machinery + "/versions"
    /// Versions kept per file.
    static let limit = 16

    let fileSystem: FileSystem

    struct Version {
        var order: UInt64
        var hash: ContentHash
        var name: String
        /// Saved by a person (not written by Folio).
        var isEdit: Bool
    }

    /// The version Folio keeps of a file it removes (its partition has no entities left): a file
    /// with no entities, so that a save from an older buffer of it is merged against the removal.
    static let removal = PartitionFile.encode(PartitionFile.Contents(entities: [:], extra: [:]))

    /// The folder holding one file's versions.
    static func folder(of path: String) -> String { folder + "/" + path }

    /// The versions kept of a file, oldest first (names that are not versions are ignored).
    func versions(of path: String) throws(FolioError) -> [Version] {
        var found: [Version] = []
        for entry in try fileSystem.list(Self.folder(of: path)) where !entry.isDirectory {
            guard entry.name.hasSuffix(".json") else { continue }
            let isEdit = entry.name.hasSuffix(".edit.json")
            let parts = entry.name.dropLast(isEdit ? 10 : 5).split(separator: "-")
            guard parts.count == 2, parts[0].count == 20, let order = UInt64(parts[0]),
                  let hash = ContentHash(hex: parts[1]) else { continue }
            found.append(Version(order: order, hash: hash, name: entry.name, isEdit: isEdit))
        }
        return found.sorted { $0.order < $1.order }
    }

    /// A version's bytes, or nil when it is gone or damaged (its bytes do not match its hash).
    func bytes(of version: Version, path: String) throws(FolioError) -> [UInt8]? {
        guard let (bytes, _) = try fileSystem.read(Self.folder(of: path) + "/" + version.name),
              ContentHash(bytes) == version.hash else { return nil }
        return bytes
    }

    /// Keeps `bytes` as the newest version of `path`, removing an older copy of the same bytes and
    /// the versions beyond ``limit``. A person's save (`edit`)
    /// already kept, under either kind, is not kept again.
    /// - Parameter barrier: Durable once this barrier is flushed (file and folder): Folio's
    ///   version of a file about to be replaced must survive a power cut that the new file
    ///   survives, or the file would read as a person's save. The caller flushes it before it
    ///   replaces the file. Nil: not synced.
    func keep(_ bytes: [UInt8], of path: String, edit: Bool = false, barrier: DurabilityBarrier? = nil) throws(FolioError) {
        let hash = ContentHash(bytes)
        var versions = try versions(of: path)
        if let newest = versions.last, newest.hash == hash, newest.isEdit == edit { return }
        if edit, versions.contains(where: { $0.hash == hash }) { return }
        let folder = Self.folder(of: path)
        if let barrier { try barrier.makeDirectory(folder) } else { try fileSystem.makeDirectoryDurably(folder) }
        // Written to a temp file and renamed, so a kill never leaves half a version; another
        // process may keep one under the same number at the same instant: take the next then.
        let temp = StoreLayout.tempFolder + "/" + AtomicFile.counter.nextName(for: "version")
        _ = try fileSystem.writeNewFile(temp, bytes, sync: barrier?.fileSync ?? .none, for: folder)
        var order = (versions.last?.order ?? 0) + 1
        var placed = false
        for _ in 0..<4 where !placed {
            let digits = String(order)
            let name = String(repeating: "0", count: max(0, 20 - digits.count)) + digits + "-\(hash)" + (edit ? ".edit.json" : ".json")
            switch try fileSystem.renameNoReplace(temp, to: folder + "/" + name) {
            case true?: placed = true
            case false?: order += 1
            case nil:
                try fileSystem.rename(temp, to: folder + "/" + name)
                placed = true
            }
        }
        if !placed {
            _ = Platform.unlink(fileSystem.absolute(temp))
            return
        }
        barrier?.noteFolder(folder)
        versions.removeAll { version in
            guard version.hash == hash else { return false }
            _ = Platform.unlink(fileSystem.absolute(folder + "/" + version.name))
            return true
        }
        for old in versions.dropLast(max(0, Self.limit - 1)) {
            try fileSystem.unlink(folder + "/" + old.name)
        }
    }
}

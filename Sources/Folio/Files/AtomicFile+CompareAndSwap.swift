/// Replacing a file only if it still holds the bytes the caller read: an atomic compare-and-swap
/// on rename, so that a save made by an editor between Folio's read and Folio's rename is never
/// overwritten.
///
/// The new content goes to a temp file (written and fsynced as ``replace(_:with:)`` does, but in
/// a folder the caller names, which opening the store does not empty), then
/// the temp file and the target are **exchanged** in one atomic step (`renameat2(RENAME_EXCHANGE)`
/// on Linux, `renamex_np(RENAME_SWAP)` on Apple platforms): the target now holds the new content
/// and the temp path holds what was there. If that is not what the caller read (someone saved
/// since, by rename or in place), the two are exchanged back and the caller reads the file again.
/// No instant exists at which the person's save is gone from the folder: during the swap back it
/// sits at the temp path for one system call, and a crash there leaves it there, where the caller
/// finds it (``isSwapLeftover(_:)``) and merges it.
///
/// Where the file system cannot exchange (it answers EINVAL or ENOTSUP), the replace falls back
/// to a plain rename after the caller's identity check, as before.
extension AtomicFile {
    enum SwapOutcome: Equatable {
        /// The file holds the new content; its identity as it was right after the rename (or as
        /// the temp file had it, if someone replaced the file at once: then it no longer matches
        /// and the next access reads the file again).
        case replaced(FileIdentity?)
        /// The file did not hold the expected bytes (or was created or removed meanwhile): it was
        /// left as the person saved it, and nothing was written. `saves`: the bytes of the saves
        /// found during the swap, oldest first. For one swap system call Folio's content stood in
        /// the file, so someone may have read it and may save from it: the caller must merge these
        /// saves into its state right away, not only read the file again. A save that a newer one
        /// replaced during the swap is among them, and is no longer in the folder.
        case changedOnDisk(saves: [[UInt8]])
    }

    /// A new version of a file written beside it, ready for ``swapIn(_:ifStill:)``.
    struct Staged {
        var relative: String
        var bytes: [UInt8]
        /// The temp file (`swapFolder/<pid>-<n>-staged`) and its identity.
        var temp: String
        var identity: FileIdentity
    }

    /// Writes the temp file of a compare-and-swap, synced as `sync` says: the caller makes it
    /// durable (a ``DurabilityBarrier``) before ``swapIn(_:ifStill:)`` puts it in place.
    ///
    /// Its name ends in `-staged` until the swap: a crash before then leaves Folio's own content
    /// there (``isStagedLeftover(_:)``), which is removed, never taken for a person's save (its
    /// kept version may not have reached the disk yet). Only ``swapIn(_:ifStill:)`` renames it to
    /// `-swap`, once the caller's barrier made the version kept of it durable.
    func stage(_ relative: String, _ bytes: [UInt8], swapFolder: String, sync: FileSystem.NewFileSync) throws(FolioError) -> Staged {
        let temp = swapFolder + "/" + Self.counter.nextName(for: "staged")
        let identity = try fileSystem.writeNewFile(temp, bytes, sync: sync, for: relative)
        return Staged(relative: relative, bytes: bytes, temp: temp, identity: identity)
    }

    /// Removes a staged temp file that will not be used (best effort: the next checkpoint of the
    /// file removes a leftover).
    func discard(_ staged: Staged) {
        _ = Platform.unlink(fileSystem.absolute(staged.temp))
    }

    /// Puts a staged file in place if the target still holds bytes whose hash is `expected` (or,
    /// with `expected` nil, still does not exist). Does not sync the directory. The temp file is
    /// gone when this returns, whatever the outcome.
    ///
    /// For the swap the temp file is `swapFolder/<pid>-<n>-swap`: a folder that opening the store
    /// does not empty, so that a crash during the swap back leaves the person's save there, never
    /// deleted (the caller looks for such leftovers, ``isSwapLeftover(_:)``).
    func swapIn(_ staged: Staged, ifStill expected: ContentHash?) throws(FolioError) -> SwapOutcome {
        let (relative, bytes, written) = (staged.relative, staged.bytes, staged.identity)
        let temp = String(staged.temp.dropLast("staged".count)) + "swap"
        do throws(FolioError) {
            try fileSystem.rename(staged.temp, to: temp)
        } catch {
            discard(staged)
            throw error
        }
        var tempHoldsOurs = true
        defer {
            // Best effort: a temp file left behind is removed by the next open.
            if tempHoldsOurs { _ = Platform.unlink(fileSystem.absolute(temp)) }
        }
        /// Our file is in place (and `temp` is not ours any more).
        func replaced() throws(FolioError) -> SwapOutcome {
            tempHoldsOurs = false
            return .replaced(try settledIdentity(relative, written: written))
        }
        guard let expected else {
            switch try fileSystem.renameNoReplace(temp, to: relative) {
            case true?: return try replaced()
            case false?: return .changedOnDisk(saves: [])
            case nil:
                try fileSystem.rename(temp, to: relative)
                return try replaced()
            }
        }
        guard try fileSystem.exchange(temp, relative) else {
            if try fileSystem.identity(relative) == nil { return .changedOnDisk(saves: []) }
            try fileSystem.rename(temp, to: relative)
            return try replaced()
        }
        tempHoldsOurs = false
        // `temp` now holds what was at `relative`.
        let previous = try fileSystem.read(temp)
        if let previous, ContentHash(previous.bytes) == expected {
            try fileSystem.unlink(temp)
            return try replaced()
        }
        let superseded = try putBack(temp, relative, ours: ContentHash(bytes))
        return .changedOnDisk(saves: (previous.map { [$0.bytes] } ?? []) + (superseded.map { [$0] } ?? []))
    }

    /// Exchanges the person's file (at `temp`) back into place. If yet another save reached
    /// Folio's file meanwhile (renamed over it, or written into it in place), the swap back brings
    /// that newer save to `temp`: a second swap puts it in place, and the older save it
    /// superseded is returned, for the caller to keep (it is removed from `temp`).
    private func putBack(_ temp: String, _ relative: String, ours: ContentHash) throws(FolioError) -> [UInt8]? {
        _ = try fileSystem.exchange(temp, relative)
        var superseded: [UInt8]?
        if let now = try fileSystem.read(temp), ContentHash(now.bytes) != ours {
            _ = try fileSystem.exchange(temp, relative)
            superseded = try fileSystem.read(temp)?.bytes
        }
        try fileSystem.unlink(temp)
        return superseded
    }

    /// The identity the file has after the rename, if it is still Folio's file unchanged (the
    /// rename changes its status-change time); else the temp file's, which no longer matches.
    private func settledIdentity(_ relative: String, written: FileIdentity) throws(FolioError) -> FileIdentity? {
        guard let now = try fileSystem.identity(relative) else { return nil }
        return now.isSameFile(as: written) && now.size == written.size && now.modified == written.modified ? now : written
    }

    /// Whether a file name is a temp file of ``swapIn(_:ifStill:)``.
    static func isSwapLeftover(_ name: String) -> Bool {
        name.hasSuffix("-swap")
    }

    /// Whether a file name is a temp file ``stage(_:_:swapFolder:sync:)`` wrote and no swap used
    /// yet: Folio's own content, safe to remove.
    static func isStagedLeftover(_ name: String) -> Bool {
        name.hasSuffix("-staged")
    }
}

extension FileIdentity {
    /// The same file (device and inode), whatever its content.
    func isSameFile(as other: FileIdentity) -> Bool {
        device == other.device && inode == other.inode
    }
}

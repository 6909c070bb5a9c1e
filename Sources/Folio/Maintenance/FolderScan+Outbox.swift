internal import Foundation

/// The outbox: command files, their numbering, failed commands and their reasons, the archive of
/// sent commands, quarantined files.
extension FolderScan {
    func checkOutbox() throws {
        var places: [UInt64: [String]] = [:]
        for entry in list(OutboxBook.folder) {
            let path = OutboxBook.folder + "/" + entry.name
            if entry.isDirectory {
                switch path {
                case OutboxBook.failedFolder: checkFailedFolder(&places)
                case OutboxBook.sentFolder: checkSentFolder(&places)
                case OutboxBook.quarantineFolder:
                    checkQuarantine(
                        OutboxBook.quarantineFolder,
                        what:
                            "an unreadable command file: the sync engine sends nothing while it is here; repair it and move it back to outbox/, or delete it (its change is then lost)"
                    )
                default: report(.warning, .strayFile, path, "a folder that is not part of the outbox: Folio ignores it")
                }
                continue
            }
            guard let sequence = commandSequence(path, name: entry.name) else { continue }
            places[sequence, default: []].append(path)
            if let command = checkCommand(path, sequence: sequence, severity: .error, heldByJournal: journalSequences.contains(sequence)) {
                outbox.set(sequence, .pending(command))
                commandFiles[sequence] = path
            }
        }
        for (sequence, paths) in places.sorted(by: { $0.key < $1.key }) where paths.count > 1 {
            let explained = journalSequences.contains(sequence)
            report(
                explained ? .note : .error, .outboxNumbering, paths[0],
                "command \(sequence) is also in \(paths.dropFirst().joined(separator: ", "))"
                    + (explained
                        ? ": a checkpoint was cut short, and the journal settles it on the next open"
                        : ": a command is in exactly one place; keep the one that is right (a copy in sent/ means it was sent)"))
        }
        checkGaps()
    }

    /// The sequence a command file's name gives, or nil (reported) when the name is not one.
    private func commandSequence(_ path: String, name: String) -> UInt64? {
        if let sequence = CommandFileName.sequence(fromFileName: name) { return sequence }
        let stray = StrayFileProblem.classify(name)
        if stray.kind == .strayFile, name.hasSuffix(".json"), !name.hasPrefix(".") {
            report(
                .error, .outboxNumbering, path,
                "not a command file name (20 digits, then .json, e.g. 00000000000000000042.json): Folio ignores it, so its change is never sent")
        } else {
            report(stray.severity, stray.kind, path, stray.message)
        }
        return nil
    }

    /// The commands that records of the journal's current generation change: their files may be
    /// ones a checkpoint was writing when a crash cut it short (the journal holds their bytes).
    var journalSequences: Set<UInt64> {
        Set(records.flatMap { $0.outbox.map(\.sequence) })
    }

    /// Parses one command file and checks its shape, its number and its id.
    /// - Parameter heldByJournal: The journal holds this command: a file that is not a whole
    ///   command is one a checkpoint was writing when it was cut short, a note, not damage.
    func checkCommand(_ path: String, sequence: UInt64, severity: StoreProblem.Severity, heldByJournal: Bool = false) -> JSONValue? {
        guard let bytes = readFile(path) else { return nil }
        if heldByJournal && !Self.isWholeCommand(bytes, sequence: sequence, path: path) {
            report(
                .note, .outboxCommand, path,
                "cut short by a checkpoint a crash interrupted: the journal holds command \(sequence), and the next open writes this file again")
            return nil
        }
        let quarantine =
            severity == .error
            ? "; Folio moves it to outbox/quarantine/ and sends nothing until it is repaired" : ""
        guard let json = parseJSON(path, bytes, severity: severity, what: "not a command" + quarantine) else { return nil }
        let locator = JSONKeyLocator(bytes)
        let command: OutboxCommand
        do {
            command = try OutboxCommand(json: json, path: path)
        } catch {
            report(severity, .outboxCommand, path, at: .init(line: 1, column: 1), error.message + quarantine)
            return nil
        }
        guard command.sequence == sequence else {
            report(
                severity, .outboxNumbering, path, at: locator.position(of: ["sequence"]),
                "the file's name says command \(sequence) but its \"sequence\" is \(command.sequence)" + quarantine)
            return nil
        }
        // `<writer id>-<sequence>` (FORMAT.md): the writer is this folder instance's, or an earlier
        // one's (a copy keeps the ids of the commands it was copied with).
        if !command.id.hasSuffix("-" + CommandFileName.stem(sequence)) {
            report(
                .warning, .outboxCommand, path, at: locator.position(of: ["id"]),
                "its id \"\(command.id)\" is not <writer id>-<its sequence>: copied from another command? The server takes the id as its idempotency key")
        }
        return json
    }

    /// Whether `bytes` are a command file of this number that parses (nothing is reported).
    private static func isWholeCommand(_ bytes: [UInt8], sequence: UInt64, path: String) -> Bool {
        do {
            return try OutboxCommand(json: try JSONParser.parse(bytes), path: path).sequence == sequence
        } catch {
            return false
        }
    }

    private func checkFailedFolder(_ places: inout [UInt64: [String]]) {
        let folder = OutboxBook.failedFolder
        let entries = list(folder)
        let names = Set(entries.map(\.name))
        for entry in entries {
            let path = folder + "/" + entry.name
            if entry.isDirectory {
                report(.warning, .strayFile, path, "a folder inside outbox/failed/: Folio ignores it")
                continue
            }
            if entry.name.hasSuffix(CommandFileName.reasonSuffix) {
                let commandName = String(entry.name.dropLast(CommandFileName.reasonSuffix.utf8.count)) + CommandFileName.suffix
                if CommandFileName.sequence(fromFileName: commandName) == nil || !names.contains(commandName) {
                    report(.warning, .outboxCommand, path, "a failure reason without its command file \(commandName): delete it")
                }
                continue
            }
            guard let sequence = commandSequence(path, name: entry.name) else { continue }
            places[sequence, default: []].append(path)
            guard let command = checkCommand(path, sequence: sequence, severity: .error, heldByJournal: journalSequences.contains(sequence)) else { continue }
            let reasonPath = folder + "/" + CommandFileName.reasonName(sequence)
            var reason: JSONValue = .object(["reason": .string("unknown (no reason file)")])
            if let bytes = readFile(reasonPath) {
                // A reason cut short with its command's "fail" still in the journal: a note.
                let severity: StoreProblem.Severity = journalSequences.contains(sequence) ? .note : .warning
                if let value = parseJSON(
                    reasonPath, bytes, severity: severity, what: "the reason of command \(sequence) is lost (the command itself is intact)")
                {
                    if value["reason"]?.stringValue == nil {
                        report(
                            .warning, .outboxCommand, reasonPath, at: .init(line: 1, column: 1),
                            "expected an object with a \"reason\" string: {\"reason\": \"…\", \"status\": 422, \"failedAt\": \"…\"}")
                    } else {
                        reason = value
                    }
                }
            } else {
                report(.warning, .outboxCommand, path, "failed command \(sequence) has no \(FileSystem.name(of: reasonPath)): why it failed is unknown")
            }
            outbox.set(sequence, .failed(command, reason: reason))
            commandFiles[sequence] = path
        }
    }

    private func checkSentFolder(_ places: inout [UInt64: [String]]) {
        let folder = OutboxBook.sentFolder
        for entry in list(folder) {
            let path = folder + "/" + entry.name
            guard !entry.isDirectory else {
                report(.warning, .strayFile, path, "a folder inside outbox/sent/: Folio ignores it")
                continue
            }
            guard let sequence = commandSequence(path, name: entry.name) else { continue }
            places[sequence, default: []].append(path)
            _ = checkCommand(path, sequence: sequence, severity: .warning)
            do {
                sentArchive.append((sequence, try fileSystem.identity(path)?.modified ?? 0))
            } catch {
                report(.warning, .unreadable, path, "cannot be examined: \(error.message)")
            }
        }
        if sentArchive.count > OutboxBook.sentArchiveLimit {
            report(
                .note, .outboxNumbering, folder,
                "\(sentArchive.count) sent commands kept; Folio keeps the newest \(OutboxBook.sentArchiveLimit) and trims the rest at its next checkpoint that sends"
            )
        }
    }

    /// Every file in a quarantine folder is something a person must look at: each is listed, and
    /// reported with `what` unless it is nil (`status` only lists them).
    func checkQuarantine(_ folder: String, what: String?) {
        for entry in list(folder) {
            let path = folder + "/" + entry.name
            if entry.isDirectory {
                checkQuarantine(path, what: what)
            } else {
                quarantinedFiles.append(path)
                if let what { report(.warning, .quarantined, path, what) }
            }
        }
    }

    /// Missing numbers between queued commands: commands sent, coalesced or dropped leave them, so
    /// they are normal, but a file deleted by hand leaves one too.
    private func checkGaps() {
        let queued = outbox.pendingSequences
        guard queued.count > 1 else { return }
        let known = Set(outbox.failedSequences + sentArchive.map(\.sequence))
        for (previous, next) in zip(queued, queued.dropFirst()) where next > previous + 1 {
            let missing = (previous + 1)..<next
            guard !missing.allSatisfy(known.contains) else { continue }
            let range = missing.count == 1 ? "\(missing.lowerBound)" : "\(missing.lowerBound)–\(missing.upperBound - 1)"
            report(
                .note, .outboxNumbering, commandFiles[next] ?? OutboxBook.folder,
                "command(s) \(range) are missing before \(next): sent, coalesced or dropped (normal), unless a file was deleted by hand (then that change is lost)"
            )
        }
    }
}

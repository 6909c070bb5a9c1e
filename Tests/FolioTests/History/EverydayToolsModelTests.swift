import FolioCrashSupport
import Foundation
import Testing

/// The todo example app (a real process per command) and the tools people use every day on its
/// data folder: editors in a terminal (vim, nano, emacs, driven through tmux), `sed -i` and python
/// rewrites racing the app, git (clone, pull, push, merges, checkout of an older commit), unison
/// and rsync between two live folders. What each folder must hold comes from EverydayModel, the
/// rules of FORMAT.md ("Revisions", "Editing by hand", `.folio/versions/`) at the level of todos:
/// a person's change applies, the app's later changes stay, a todo deleted on one side and
/// untouched on the other is deleted, nothing deleted comes back, nothing is lost.
///
/// A lost save is a change missing from a todo that is there (the save's or the app's) or a todo
/// a save added that is missing; a lost entity is a todo the app wrote that is missing; a
/// resurrected one is a deleted todo that is back; silent divergence is two folders that synced
/// and hold different todos with no conflict reported. `FOLIO_EVERYDAY_SEED` replays the choices
/// (not the timing).
///
/// On the code that guessed a save's base among the 16 versions it kept, it printed
/// `everyday tools: 84 editor saves (vim, nano, emacs, sed), up to 420 app writes between load and
/// save, 32 git pulls (0 by the driver, 5 with markers), 13 unison syncs, 7 lost saves, 540 lost
/// entities, 19 resurrected, 0 silent divergence` (seed 1117732657): a stale buffer saved after
/// more than 16 of the app's writes deleted the todos the app added since the editor loaded the
/// file and brought back the ones it deleted. With at most 9 app writes between load and save, the
/// same code and the model agreed on 25 editor saves.
@Suite struct EverydayToolsModelTests {
    @Test(
        .enabled(
            if: Tools.runs("tmux", "vim", "nano", "emacs", "git", "unison", "rsync", "python3"),
            "needs tmux, vim, nano, emacs, git, unison, rsync and python3: apt-get install tmux vim nano emacs-nox git unison rsync python3"))
    func everydayToolsLoseNothing() async throws {
        let seed = SplitMix64.seed(replaying: "FOLIO_EVERYDAY_SEED")
        var tools: [String: String] = [:]
        for name in ["tmux", "vim", "nano", "emacs", "git", "unison", "rsync", "python3"] {
            tools[name] = try Tools.require(name)
        }
        tools["sed"] = Tools.path("sed") ?? "/bin/sed"
        tools["bash"] = Tools.path("bash") ?? "/bin/bash"
        let run = EverydayRun(
            seed: seed, tools: tools, todo: try CrashChild.executable("todo").path,
            folio: try CrashChild.executable("folio").path)
        // The tools run on a thread of their own: every step waits for a process or a screen, and
        // the test pool must not be starved by it.
        let outcome: Result<Void, EverydayRun.Failure> = await withCheckedContinuation { continuation in
            let thread = Thread {
                defer { run.closeTerminals() }
                do {
                    try run.all()
                    continuation.resume(returning: .success(()))
                } catch {
                    continuation.resume(returning: .failure(EverydayRun.Failure(description: "\(error)")))
                }
            }
            thread.stackSize = 8 << 20
            thread.start()
        }
        print(run.summary)
        for line in run.breakdown { print("everyday tools: \(line)") }
        for note in run.notes.prefix(10) { print("everyday tools: note: \(note)") }
        try outcome.get()
        let tally = run.tally
        let lostSaves = tally.count(tally.lostSaves), lostEntities = tally.count(tally.lostEntities)
        let resurrected = tally.count(tally.resurrected), divergence = tally.count(tally.divergence)
        #expect(lostSaves == 0, "\(lostSaves) lost saves (seed \(seed)): \(tally.first(tally.lostSaves))")
        #expect(lostEntities == 0, "\(lostEntities) lost entities (seed \(seed)): \(tally.first(tally.lostEntities))")
        #expect(resurrected == 0, "\(resurrected) resurrected (seed \(seed)): \(tally.first(tally.resurrected))")
        #expect(divergence == 0, "\(divergence) silent divergence (seed \(seed)): \(tally.first(tally.divergence))")
        let refusals = run.refusals.count
        #expect(refusals == 0, "conflict markers (seed \(seed)): \(run.refusals.prefix(3).joined(separator: "; "))")
    }
}

/// One run of the four phases, from one seed. Every loop is bounded in count and in time; the
/// work done is fixed by the seed, never shrunk to fit a time budget.
final class EverydayRun: @unchecked Sendable {
    typealias State = EverydayModel.State
    typealias Item = EverydayModel.Item

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    let seed: UInt64
    private var random: SplitMix64
    let tools: [String: String]
    let todo: String
    let folio: String
    let root = TemporaryFolder("everyday")
    /// The day every todo is on: today, fixed at the start (a run across midnight stays on it).
    let day: String
    var dayPath: String { "todos/\(day.prefix(7))/\(day).json" }

    var tally = EverydayModel.Tally()
    /// Things the tools did not do as told, and app commands that failed (the model notes them).
    var notes: [String] = []
    /// Conflict-marker files Folio did not refuse with path:line:column, or rewrote.
    var refusals: [String] = []
    private var terminals: [Terminal] = []
    private var titles = 0
    private var steps = 0

    var editorSaves = 0
    var toolSaves: [String: Int] = [:]
    var mostWritesBetweenLoadAndSave = 0
    var pulls = 0
    var driverPulls = 0
    var markerPulls = 0
    var unisonSyncs = 0
    var unisonConflicts = 0
    var rsyncs = 0
    var driver = false
    var started = Date()

    init(seed: UInt64, tools: [String: String], todo: String, folio: String) {
        self.seed = seed
        random = SplitMix64(seed: seed)
        self.tools = tools
        self.todo = todo
        self.folio = folio
        let parts = Calendar(identifier: .gregorian).dateComponents(in: .current, from: Date())
        day = String(format: "%04d-%02d-%02d", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0)
        try? FileManager.default.createDirectory(at: root.url, withIntermediateDirectories: true)
    }

    func closeTerminals() {
        for terminal in terminals { terminal.close() }
        terminals.removeAll()
    }

    var summary: String {
        let seconds = Int(Date().timeIntervalSince(started))
        let byTool = toolSaves.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        return "everyday tools: \(editorSaves) editor saves (vim, nano, emacs, sed), up to \(mostWritesBetweenLoadAndSave) app writes between load and save, "
            + "\(pulls) git pulls (\(driverPulls) by the driver, \(markerPulls) with markers), \(unisonSyncs) unison syncs, "
            + "\(tally.count(tally.lostSaves)) lost saves, \(tally.count(tally.lostEntities)) lost entities, "
            + "\(tally.count(tally.resurrected)) resurrected, \(tally.count(tally.divergence)) silent divergence "
            + "(seed \(seed); saves: \(byTool); \(rsyncs) rsync copies, \(unisonConflicts) unison conflicts reported; "
            + (driver ? "merge driver set up" : "no merge driver yet: folio merge-driver --help fails, 0 pulls by it") + "; \(seconds) s)"
    }

    /// Each kind of failure by phase (the text before the first colon of a case): how many ids,
    /// and the first two cases.
    var breakdown: [String] {
        var lines: [String] = []
        for (name, cases) in [
            ("lost saves", tally.lostSaves), ("lost entities", tally.lostEntities),
            ("resurrected", tally.resurrected), ("silent divergence", tally.divergence),
        ] where !cases.isEmpty {
            var phases: [String] = []
            var byPhase: [String: EverydayModel.Tally.Cases] = [:]
            for item in cases {
                let phase = String(item.text.prefix { $0 != ":" })
                if byPhase[phase] == nil { phases.append(phase) }
                byPhase[phase, default: []].append(item)
            }
            for phase in phases {
                let list = byPhase[phase]!
                lines.append(
                    "\(name) in \(phase): \(tally.count(list)), e.g. "
                        + list.prefix(2).map { String($0.text.dropFirst(phase.count + 2)) }.joined(separator: "; "))
            }
        }
        return lines
    }

    func all() throws {
        started = Date()
        try editors()
        try sedAndPython()
        try gitClones()
        try unisonAndRsync()
    }

    // MARK: - The app

    enum AppOp {
        case add(String)
        case toggle(String)
        case delete(String)
        case retitle(String, String)
    }

    private func newTitle(_ prefix: String) -> String {
        titles += 1
        return "\(prefix)-\(titles)"
    }

    private func folder(_ name: String) -> URL {
        let url = root.url.appendingPathComponent(name)
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    private func quoted(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'" }

    /// The bash script that runs `ops` as `todo` commands on `folder`, one process each. A
    /// command that fails is reported on stderr and the rest go on.
    private func script(_ ops: [AppOp], _ folder: URL) -> String {
        var lines = ["T=\(quoted(todo))", "D=\(quoted(folder.path))"]
        for op in ops {
            let command: String
            switch op {
            case .add(let title): command = "add --date \(day) --data \"$D\" \(quoted(title))"
            case .toggle(let id): command = "done \(id) --data \"$D\""
            case .delete(let id): command = "delete \(id) --data \"$D\""
            case .retitle(let id, let title): command = "edit \(id) --title \(quoted(title)) --data \"$D\""
            }
            lines.append(
                "\"$T\" \(command) >/dev/null 2>>\"$D.err\" || echo \(quoted("failed: todo " + command.replacingOccurrences(of: " --data \"$D\"", with: ""))) >&2"
            )
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Runs the app's writes on `folder`, to their end.
    private func app(_ folder: URL, _ ops: [AppOp], _ context: String) throws {
        guard !ops.isEmpty else { return }
        let file = root.url.appendingPathComponent("script-\(UUID().uuidString).sh")
        try script(ops, folder).write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let result = Shell.run(tools["bash"]!, [file.path], timeout: 300)
        guard result.status == 0 else { throw Failure(description: "\(context): the app's script ended with \(result.status): \(result.errors)") }
        for line in result.errors.split(separator: "\n") { notes.append("\(context): \(line)") }
    }

    /// `todo export --json`, as it ran.
    private func exportRun(_ folder: URL) -> Shell.Result {
        Shell.run(todo, ["export", "--json", "--data", folder.path])
    }

    /// The todos `todo export --json` lists.
    private func export(_ folder: URL, _ context: String) throws -> State {
        let result = exportRun(folder)
        guard result.status == 0 else { throw Failure(description: "\(context): todo export failed (\(result.status)): \(result.errors)") }
        return try Self.todos(inExport: Data(result.output.utf8), context)
    }

    static func todos(inExport data: Data, _ context: String) throws -> State {
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let todos = object["todos"] as? [[String: Any]]
        else {
            throw Failure(description: "\(context): todo export printed no todos")
        }
        var state: State = [:]
        for todo in todos {
            guard let id = todo["id"] as? String else { continue }
            state[id] = Item(title: todo["title"] as? String ?? "?", done: todo["done"] as? Bool ?? false)
        }
        return state
    }

    /// The todos of a day file's bytes, or nil when they do not parse.
    static func todos(inFile data: Data) -> State? {
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let entities = object["entities"] as? [String: Any]
        else { return nil }
        var state: State = [:]
        for (id, value) in entities {
            let entity = value as? [String: Any] ?? [:]
            state[id] = Item(title: entity["title"] as? String ?? "?", done: entity["done"] as? Bool ?? false)
        }
        return state
    }

    /// The app's ops applied to the model; the ids of added todos come from what the app lists
    /// after them (titles are unique). Returns the ids added.
    @discardableResult
    private func apply(_ ops: [AppOp], to model: inout State, listed: State, _ context: String) -> [String] {
        var added: [String] = []
        let byTitle = Dictionary(listed.map { ($0.value.title, $0.key) }, uniquingKeysWith: { a, _ in a })
        for op in ops {
            switch op {
            case .add(let title):
                if let id = byTitle[title] {
                    model[id] = Item(title: title, done: false)
                    added.append(id)
                } else {
                    tally.lostEntities.append((id: "title \(title)", text: "\(context): the app's new todo \"\(title)\" is missing right after its batch"))
                }
            case .toggle(let id): model[id]?.done.toggle()
            case .delete(let id):
                model[id] = nil
                tally.deleted.insert(id)
            case .retitle(let id, let title): model[id]?.title = title
            }
        }
        return added
    }

    /// `count` writes of the app: mostly adds, some done, delete and edit of the todos in
    /// `touchable` (ones nobody else touches meanwhile).
    private func appOps(_ count: Int, _ touchable: inout [String], _ prefix: String) -> [AppOp] {
        var ops: [AppOp] = []
        for _ in 0..<count {
            let roll = Int(random.next() % 100)
            if roll < 80 || touchable.isEmpty {
                ops.append(.add(newTitle(prefix)))
            } else if roll < 87 {
                ops.append(.toggle(touchable[random.index(touchable.count)]))
            } else if roll < 94 {
                ops.append(.delete(touchable.remove(at: random.index(touchable.count))))
            } else {
                ops.append(.retitle(touchable[random.index(touchable.count)], newTitle(prefix + "-edited")))
            }
        }
        return ops
    }

    private func identity(_ url: URL) -> String {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: url.path) else { return "none" }
        let inode = (attributes[.systemFileNumber] as? NSNumber)?.stringValue ?? "?"
        let time = (attributes[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
        let size = (attributes[.size] as? NSNumber)?.stringValue ?? "?"
        return "\(inode)-\(time)-\(size)"
    }

    private func stamp() -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date())
    }

    /// A todo as one line of JSON, as a person pastes it.
    private func entityLine(_ id: String, _ title: String) -> String {
        let now = stamp()
        return
            "\"\(id)\": {\"createdAt\": \"\(now)\", \"date\": \"\(day)\", \"done\": false, \"id\": \"\(id)\", \"priority\": 0, \"title\": \"\(title)\", \"updatedAt\": \"\(now)\"}"
    }

    // MARK: - Phase 1: editors through tmux

    enum Editor: String, CaseIterable {
        case vim = "vim -u NONE"
        case vimDefaults = "vim"
        case nano
        case emacs

        var tool: String { self == .vimDefaults ? "vim" : rawValue.components(separatedBy: " ")[0] }
    }

    /// What the person does in the editor.
    enum Edit {
        case retitle(id: String, from: String, to: String)
        case delete(id: String, lines: Int)
        case add(id: String, title: String, snippet: URL)
    }

    private func editors() throws {
        // Six sessions: every editor, vim with its defaults too; one with no app write between
        // load and save, one with 300 to 500.
        let kinds: [Editor] = [.vim, .vimDefaults, .nano, .emacs, [.vim, .nano, .emacs][random.index(3)], [.nano, .emacs][random.index(2)]]
        var counts = kinds.map { _ in Int(random.next() % 121) }
        let none = random.index(kinds.count)
        var many = random.index(kinds.count - 1)
        if many >= none { many += 1 }
        counts[none] = 0
        counts[many] = 300 + Int(random.next() % 201)
        for (index, kind) in kinds.enumerated() {
            try editorSession(index, kind, writes: counts[index])
        }
    }

    private func editorSession(_ index: Int, _ kind: Editor, writes: Int) throws {
        let context = "\(kind.rawValue) session \(index + 1) (\(writes) app writes between load and first save)"
        let data = folder("editor-\(index + 1)")
        let file = data.appendingPathComponent(dayPath)
        var model: State = [:]
        let seedOps = (0..<10).map { _ in AppOp.add(newTitle("e\(index + 1)")) }
        try app(data, seedOps, context)
        apply(seedOps, to: &model, listed: try export(data, context), context)

        // The editor loads the file.
        let loadedText = try String(contentsOf: file, encoding: .utf8)
        let lines = loadedText.components(separatedBy: "\n")
        guard let loaded = Self.todos(inFile: Data(loadedText.utf8)) else { throw Failure(description: "\(context): the day file does not parse") }
        tally.check(loaded, expected: model, "\(context): the file the editor loads")
        let terminal = try Terminal(
            tmux: tools["tmux"]!, command: command(kind, dayPath), in: data,
            environment: ["HOME": folder("home").path, "LANG": "C.UTF-8"])
        terminals.append(terminal)
        defer { terminal.close() }
        try terminal.waitForScreen(containing: "\"entities\"", seconds: 120)

        // The todos the person changes; the app touches only the others. The last todo of the
        // file is never deleted by lines (its block has no comma after it).
        let sorted = loaded.keys.sorted()
        var candidates = Array(sorted.dropLast())
        candidates.shuffle(using: &random)
        var plan: [Edit] = []
        for id in candidates.prefix(2) {
            plan.append(.retitle(id: id, from: loaded[id]!.title, to: newTitle("p\(index + 1)")))
        }
        for id in candidates.dropFirst(2).prefix(2) {
            guard let start = lines.firstIndex(of: "    \"\(id)\": {"),
                let end = lines[start...].firstIndex(of: "    },")
            else { throw Failure(description: "\(context): no block of \(id) in the file") }
            plan.append(.delete(id: id, lines: end - start + 1))
        }
        for _ in 0..<2 {
            let id = random.uuid().uuidString
            let snippet = root.url.appendingPathComponent("snippet-\(id).json")
            let title = newTitle("p\(index + 1)-new")
            try ("    " + entityLine(id, title) + ",\n").write(to: snippet, atomically: true, encoding: .utf8)
            plan.append(.add(id: id, title: title, snippet: snippet))
        }
        plan.shuffle(using: &random)
        var touchable = Array(candidates.dropFirst(4)) + [sorted.last!]

        var buffer = loaded, saved = loaded
        var writesSinceLoad = 0
        let saves = 3 + random.index(3)
        for save in 0..<saves {
            let count = save == 0 ? writes : 1 + random.index(25)
            let ops = appOps(count, &touchable, "e\(index + 1)")
            if !ops.isEmpty {
                try app(data, ops, context)
                touchable += apply(ops, to: &model, listed: try export(data, context), context)
                writesSinceLoad += ops.count
            }
            // The person edits the stale buffer: one or two edits first, then one more or none.
            let edits = save == 0 ? Array(plan.prefix(1 + random.index(2))) : (random.next() % 3 == 0 || plan.isEmpty ? [] : [plan[0]])
            plan.removeFirst(edits.count)
            for edit in edits {
                try perform(edit, in: terminal, kind, context)
                switch edit {
                case .retitle(let id, _, let to): buffer[id]?.title = to
                case .delete(let id, _): buffer[id] = nil
                case .add(let id, let title, _): buffer[id] = Item(title: title, done: false)
                }
            }
            try saveBuffer(in: terminal, kind, file: file, expecting: buffer, "\(context), save \(save + 1)")
            editorSaves += 1
            toolSaves[kind.tool, default: 0] += 1
            mostWritesBetweenLoadAndSave = max(mostWritesBetweenLoadAndSave, writesSinceLoad)
            // The save's changes against the buffer saved before (or loaded) apply.
            for (id, _) in EverydayModel.changes(from: saved, to: buffer) {
                tally.personal.insert(id)
                tally.savedBy[id] = "\(kind.rawValue), save \(save + 1)"
                if let item = buffer[id] {
                    model[id] = item
                } else {
                    model[id] = nil
                    tally.deleted.insert(id)
                }
            }
            saved = buffer
        }
        // The app reads the last save with its next writes.
        let ops = appOps(3, &touchable, "e\(index + 1)")
        try app(data, ops, context)
        apply(ops, to: &model, listed: try export(data, context), context)
        try quit(terminal, kind)
        tally.check(try export(data, context), expected: model, context)
    }

    private func command(_ kind: Editor, _ path: String) -> String {
        switch kind {
        case .vim: "\(tools["vim"]!) -n -N -u NONE -i NONE \(quoted(path))"
        case .vimDefaults: "\(tools["vim"]!) \(quoted(path))"
        case .nano: "\(tools["nano"]!) -I -U \(quoted(path))"
        // No compiling of Lisp to native code in the background: Debian's emacs does it on first
        // use (a fresh machine, as CI's), and the compiler processes slowed saves past any wait.
        case .emacs: "\(tools["emacs"]!) -nw -Q --eval \(quoted("(setq native-comp-deferred-compilation nil native-comp-jit-compilation nil)")) \(quoted(path))"
        }
    }

    /// Answers the question the editor asks at its bottom line, if any: yes to saving over a file
    /// that changed on disk, to editing a buffer whose file changed, and Enter to vim's "Press
    /// ENTER". Returns whether it answered.
    @discardableResult
    private func answer(_ terminal: Terminal, _ kind: Editor) throws -> Bool {
        // nano asks above its two lines of answers; vim and emacs on the last line.
        let lines = terminal.screen().filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
        let line = (kind == .nano ? lines.suffix(3) : lines.suffix(1)).joined(separator: "\n")
        var keys: [String] = []
        var text: String?
        switch kind {
        case .vim, .vimDefaults:
            if line.contains("(y/n)") {
                text = "y"
            } else if line.contains("Press ENTER") {
                keys = ["Enter"]
            } else if line.contains("[O]K, (L)oad File") {
                text = "O"
            }
        case .nano:
            if line.contains("continue saving?") || line.contains("(Y/N)") { text = "y" }
        case .emacs:
            if line.contains("really edit the buffer?") {
                text = "y"
            } else if line.contains("(yes or no)") {
                text = "yes"
                keys = ["Enter"]
            } else if line.contains("(y or n)") {
                text = "y"
            }
        }
        guard text != nil || !keys.isEmpty else { return false }
        if let text { try terminal.type(text) }
        if !keys.isEmpty { try terminal.keys(keys[0]) }
        // Wait for the question to go, so that it is not answered twice.
        let deadline = Date().addingTimeInterval(3)
        while Date() < deadline,
            (kind == .nano
                ? terminal.screen().filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }.suffix(3).joined(separator: "\n") : terminal.bottomLine())
                == line
        {
            Thread.sleep(forTimeInterval: 0.05)
        }
        return true
    }

    /// Waits until `done` holds, answering the editor's questions meanwhile.
    /// The wait only catches a hung editor: on two loaded cores an editor's step can take many seconds.
    private func settle(_ terminal: Terminal, _ kind: Editor, _ what: String, seconds: Double = 120, _ done: () -> Bool) throws {
        try terminal.wait(what, seconds: seconds) {
            if done() { return true }
            if !terminal.isRunning { throw Failure(description: "the editor ended while waiting for \(what)") }
            try answer(terminal, kind)
            return done()
        }
    }

    private func perform(_ edit: Edit, in terminal: Terminal, _ kind: Editor, _ context: String) throws {
        steps += 1
        // The marker the editor shows once it did the step; the command typed does not contain it.
        let marker = "done-\(steps)"
        let onScreen = { (text: String) in { terminal.screen().contains { $0.contains(text) } } }
        switch kind {
        case .vim, .vimDefaults:
            switch edit {
            case .retitle(_, let from, let to): try terminal.type(":%s/\"\(from)\"/\"\(to)\"/")
            case .delete(let id, _): try terminal.type(":g/^    \"\(id)\": {$/.;/^    },$/d")
            case .add(_, _, let snippet): try terminal.type(":g/^  \"entities\": {$/r \(snippet.path)")
            }
            try terminal.keys("Enter")
            try terminal.type(":echo \"done-\" . \(steps)")
            try terminal.keys("Enter")
            try settle(terminal, kind, "\(context): vim to do \(edit)", onScreen(marker))
        case .nano:
            switch edit {
            case .retitle(_, let from, let to):
                try terminal.keys("C-\\")
                try settle(terminal, kind, "nano's search prompt", onScreen("Search (to replace)"))
                try terminal.type("\"\(from)\"")
                try terminal.keys("Enter")
                try settle(terminal, kind, "nano's replace prompt", onScreen("Replace with"))
                try terminal.type("\"\(to)\"")
                try terminal.keys("Enter")
                try settle(terminal, kind, "nano's question", onScreen("Replace this instance?"))
                try terminal.type("a")
                try settle(terminal, kind, "\(context): nano to replace \(from)", onScreen("Replaced 1 occurrence"))
            case .delete(let id, let lines):
                try terminal.keys("C-w")
                try settle(terminal, kind, "nano's search prompt", onScreen("Search"))
                try terminal.type("    \"\(id)\": {")
                try terminal.keys("Enter")
                for _ in 0..<lines { try terminal.keys("C-k") }
                try terminal.keys("C-c")
                try settle(terminal, kind, "\(context): nano to cut the lines of \(id)", onScreen("[ line "))
            case .add(_, _, let snippet):
                try terminal.keys("C-w")
                try settle(terminal, kind, "nano's search prompt", onScreen("Search"))
                try terminal.type("  \"entities\": {")
                try terminal.keys("Enter", "Down", "Home", "C-r")
                try settle(terminal, kind, "nano's file prompt", onScreen("File to insert"))
                try terminal.type(snippet.path)
                try terminal.keys("Enter")
                try settle(terminal, kind, "\(context): nano to insert the snippet", onScreen("[ Read 1 line"))
            }
        case .emacs:
            switch edit {
            case .retitle(_, let from, let to):
                try terminal.keys("M-<", "M-x")
                try terminal.type("replace-string")
                try terminal.keys("Enter")
                try settle(terminal, kind, "emacs's prompt", onScreen("Replace string"))
                try terminal.type("\"\(from)\"")
                try terminal.keys("Enter")
                try settle(terminal, kind, "emacs's prompt", onScreen("with:"))
                try terminal.type("\"\(to)\"")
                try terminal.keys("Enter")
                try settle(terminal, kind, "\(context): emacs to replace \(from)", onScreen("Replaced 1 occurrence"))
            case .delete(let id, let lines):
                try eval(
                    "(progn (goto-char (point-min)) (re-search-forward \"^    \\\"\(id)\\\": {$\") (beginning-of-line) (kill-line \(lines)) (message \"done-%d\" \(steps)))",
                    in: terminal, marker, context)
            case .add(_, _, let snippet):
                try eval(
                    "(progn (goto-char (point-min)) (re-search-forward \"^  \\\"entities\\\": {$\") (forward-line 1) (insert-file-contents \"\(snippet.path)\") (message \"done-%d\" \(steps)))",
                    in: terminal, marker, context)
            }
        }
    }

    /// Emacs's M-: with an expression that ends by showing `marker`.
    private func eval(_ expression: String, in terminal: Terminal, _ marker: String, _ context: String) throws {
        try terminal.keys("M-:")
        try settle(terminal, .emacs, "emacs's Eval prompt", { terminal.screen().contains { $0.contains("Eval:") } })
        try terminal.type(expression)
        try terminal.keys("Enter")
        try settle(terminal, .emacs, "\(context): emacs to run \(expression)", { terminal.screen().contains { $0.contains(marker) } })
    }

    /// Saves the editor's buffer and waits until the file holds it (its identity changed and its
    /// todos are the buffer's), answering the editor's questions: the person's change is really
    /// in the file before Folio reads it.
    private func saveBuffer(in terminal: Terminal, _ kind: Editor, file: URL, expecting buffer: State, _ context: String) throws {
        let before = identity(file)
        switch kind {
        case .vim, .vimDefaults:
            try terminal.type(":w!")
            try terminal.keys("Enter")
        case .nano:
            try terminal.keys("C-o")
            try settle(terminal, kind, "nano's file name prompt", { terminal.screen().contains { $0.contains("File Name to Write") } })
            try terminal.keys("Enter")
        case .emacs:
            // An unchanged buffer is saved too: the person marks it changed (M-x
            // set-buffer-modified-p does not exist as a command, so through M-:).
            steps += 1
            try eval("(progn (set-buffer-modified-p t) (message \"done-%d\" \(steps)))", in: terminal, "done-\(steps)", context)
            try terminal.keys("C-x", "C-s")
        }
        var last: State?
        do {
            try settle(terminal, kind, "\(context): the save") {
                guard identity(file) != before, let data = try? Data(contentsOf: file) else { return false }
                last = Self.todos(inFile: data)
                return last == buffer
            }
        } catch {
            // What the file is, when it never held the buffer: unchanged (the save never reached
            // it), or not JSON (the editing left the buffer broken, and Folio left it untouched).
            func unparsed() -> String {
                let changed = identity(file) != before ? "changed" : "unchanged"
                guard let data = try? Data(contentsOf: file) else { return "no file (identity \(changed))" }
                do {
                    _ = try JSONSerialization.jsonObject(with: data)
                    return "the file is JSON without entities (identity \(changed), \(data.count) bytes)"
                } catch {
                    return "no parsed file (identity \(changed), \(data.count) bytes): \(error)"
                }
            }
            let difference =
                last.map { found in
                    EverydayModel.changes(from: buffer, to: found).prefix(4).map { "\($0.key): \($0.value)" }.joined(separator: ", ")
                } ?? unparsed()
            throw Failure(description: "\(error); the file differs from the buffer: \(difference)")
        }
        // vim may still show "Press ENTER".
        Thread.sleep(forTimeInterval: 0.05)
        try answer(terminal, kind)
    }

    private func quit(_ terminal: Terminal, _ kind: Editor) throws {
        switch kind {
        case .vim, .vimDefaults:
            try terminal.keys("Escape")
            try terminal.type(":qa!")
            try terminal.keys("Enter")
        case .nano: try terminal.keys("C-x")
        case .emacs: try terminal.keys("C-x", "C-c")
        }
        let deadline = Date().addingTimeInterval(10)
        while terminal.isRunning, Date() < deadline {
            let line = terminal.bottomLine()
            if kind == .nano, line.contains("Save modified buffer") { try terminal.type("n") }
            if kind == .emacs, line.contains("Save file") { try terminal.type("n") }
            if kind == .emacs, line.contains("(yes or no)") {
                try terminal.type("yes")
                try terminal.keys("Enter")
            }
            Thread.sleep(forTimeInterval: 0.1)
        }
        if terminal.isRunning { notes.append("\(kind.rawValue) did not quit; its terminal was closed") }
        terminal.close()
    }

    // MARK: - Phase 2: sed -i and python rewrites racing the app

    static let python = """
        import json, os, sys
        path, mode, op, id = sys.argv[1:5]
        extra = sys.argv[5:-1]
        temp_folder = sys.argv[-1]
        with open(path) as f:
            data = json.load(f)
        entities = data["entities"]
        if op == "add":
            title, date, stamp = extra
            entities[id] = {"createdAt": stamp, "date": date, "done": False, "id": id, "priority": 0, "title": title, "updatedAt": stamp}
        elif id not in entities:
            print("absent")
            sys.exit(0)
        elif op == "toggle":
            entities[id]["done"] = not entities[id]["done"]
        elif op == "delete":
            del entities[id]
        elif op == "retitle":
            entities[id]["title"] = extra[0]
        if mode == "inplace":
            with open(path, "w") as f:
                json.dump(data, f, indent=2)
                f.write("\\n")
        else:
            temp = os.path.join(temp_folder, "python-%d.json" % os.getpid())
            with open(temp, "w") as f:
                json.dump(data, f, indent=2)
                f.write("\\n")
            os.replace(temp, path)
        print("saved")
        """

    private func sedAndPython() throws {
        let context = "sed and python racing the app"
        let data = folder("tools")
        let path = data.appendingPathComponent(dayPath).path
        let temp = folder("python-temp")
        var model: State = [:]
        let seedOps = (0..<30).map { _ in AppOp.add(newTitle("s")) }
        try app(data, seedOps, context)
        var ids = apply(seedOps, to: &model, listed: try export(data, context), context)
        ids.shuffle(using: &random)
        var targets = Array(ids.prefix(20))
        let appOwned = Array(ids.dropFirst(20))

        // The app writes in the background: 150 adds and a done of each of its own todos.
        var background: [AppOp] = (0..<150).map { _ in .add(newTitle("r")) }
        for id in appOwned { background.insert(.toggle(id), at: random.index(background.count)) }
        let file = root.url.appendingPathComponent("background.sh")
        try script(background, data).write(to: file, atomically: true, encoding: .utf8)
        let writer = Process()
        writer.executableURL = URL(fileURLWithPath: tools["bash"]!)
        writer.arguments = [file.path]
        let writerErrors = root.url.appendingPathComponent("background.err")
        _ = FileManager.default.createFile(atPath: writerErrors.path, contents: nil)
        let errorHandle = try FileHandle(forWritingTo: writerErrors)
        writer.standardError = errorHandle
        writer.standardOutput = FileHandle.nullDevice
        try writer.run()
        defer {
            if writer.isRunning { writer.terminate() }
            try? errorHandle.close()
        }

        // 60 saves, one every ~30 ms (at most 120 s): sed adds a todo or retitles one, python
        // adds, toggles, deletes or retitles, in place or by rename.
        var personal: [(id: String, item: Item?)] = []
        let start = Date()
        var attempts = 0
        while personal.count < 60, attempts < 200, Date().timeIntervalSince(start) < 120 {
            attempts += 1
            let roll = Int(random.next() % 100)
            let tool: String
            var result: Shell.Result
            var change: (id: String, item: Item?)
            if roll < 50 {
                tool = "sed"
                if roll < 25 || targets.isEmpty {
                    let id = random.uuid().uuidString, title = newTitle("sed")
                    result = Shell.run(tools["sed"]!, ["-i", "s/^  \"entities\": {$/&\\n    \(entityLine(id, title)),/w /dev/stdout", path])
                    change = (id, Item(title: title, done: false))
                } else {
                    let id = targets.removeLast(), title = newTitle("sed-retitled")
                    result = Shell.run(tools["sed"]!, ["-i", "s/\"title\": \"\(model[id]!.title)\"/\"title\": \"\(title)\"/w /dev/stdout", path])
                    change = (id, Item(title: title, done: model[id]!.done))
                }
                if result.status == 0, result.output.isEmpty { result.output = "absent" }
            } else {
                let mode = roll < 75 ? "inplace" : "rename"
                tool = "python \(mode == "inplace" ? "in place" : "by rename")"
                let kind = targets.isEmpty ? 0 : Int(random.next() % 4)
                if kind == 0 {
                    let id = random.uuid().uuidString, title = newTitle("py")
                    result = Shell.run(tools["python3"]!, ["-c", Self.python, path, mode, "add", id, title, day, stamp(), temp.path])
                    change = (id, Item(title: title, done: false))
                } else {
                    let id = targets.removeLast()
                    let item = model[id]!
                    switch kind {
                    case 1:
                        result = Shell.run(tools["python3"]!, ["-c", Self.python, path, mode, "toggle", id, temp.path])
                        change = (id, Item(title: item.title, done: !item.done))
                    case 2:
                        result = Shell.run(tools["python3"]!, ["-c", Self.python, path, mode, "delete", id, temp.path])
                        change = (id, nil)
                    default:
                        let title = newTitle("py-retitled")
                        result = Shell.run(tools["python3"]!, ["-c", Self.python, path, mode, "retitle", id, title, temp.path])
                        change = (id, Item(title: title, done: item.done))
                    }
                }
            }
            if result.status != 0 || result.output.contains("absent") {
                // A read that caught the file mid-save, or a todo the file lost: not a save.
                notes.append("\(context): \(tool) did not save (\(result.status)): \(result.output.prefix(80)) \(result.errors.prefix(200))")
            } else {
                personal.append(change)
                editorSaves += 1
                toolSaves[tool.components(separatedBy: " ")[0], default: 0] += 1
                model[change.id] = change.item
                tally.personal.insert(change.id)
                tally.savedBy[change.id] = tool
                if change.item == nil { tally.deleted.insert(change.id) }
            }
            Thread.sleep(forTimeInterval: 0.03)
        }
        let deadline = Date().addingTimeInterval(180)
        while writer.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        guard !writer.isRunning else { throw Failure(description: "\(context): the app's writes did not end in 180 s") }
        let errors = (try? String(contentsOf: writerErrors, encoding: .utf8)) ?? ""
        for line in errors.split(separator: "\n") { notes.append("\(context): \(line)") }
        let listed = try export(data, context)
        apply(background, to: &model, listed: listed, context)
        tally.check(listed, expected: model, context)
    }

    // MARK: - Phase 3: git

    private var gitEnvironment: [String: String] {
        [
            "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_AUTHOR_NAME": "Folio user", "GIT_AUTHOR_EMAIL": "user@folio.invalid",
            "GIT_COMMITTER_NAME": "Folio user", "GIT_COMMITTER_EMAIL": "user@folio.invalid", "GIT_TERMINAL_PROMPT": "0", "GIT_MERGE_AUTOEDIT": "no",
        ]
    }

    @discardableResult
    private func git(_ folder: URL, _ arguments: String..., allowFailure: Bool = false) throws -> Shell.Result {
        let result = Shell.run(tools["git"]!, arguments, in: folder, environment: gitEnvironment)
        if result.status != 0, !allowFailure {
            throw Failure(description: "git \(arguments.joined(separator: " ")) in \(folder.lastPathComponent): \(result.status): \(result.errors)")
        }
        return result
    }

    private func commitIfChanged(_ folder: URL, _ message: String) throws {
        try git(folder, "add", "-A")
        if try git(folder, "diff", "--cached", "--quiet", allowFailure: true).status != 0 {
            try git(folder, "commit", "-q", "-m", message)
        }
    }

    private func gitClones() throws {
        let a = folder("git-a"), remote = root.url.appendingPathComponent("git-remote.git"), b = root.url.appendingPathComponent("git-b")
        var state: State = [:]
        let seedOps = (0..<8).map { _ in AppOp.add(newTitle("g")) }
        try app(a, seedOps, "git")
        apply(seedOps, to: &state, listed: try export(a, "git"), "git")
        try "outbox/\n".write(to: a.appendingPathComponent(".gitignore"), atomically: true, encoding: .utf8)
        try git(a, "init", "-q", "-b", "main")
        try commitIfChanged(a, "Todos")
        try git(root.url, "init", "-q", "--bare", "-b", "main", remote.path)
        try git(a, "remote", "add", "origin", remote.path)
        try git(a, "push", "-q", "-u", "origin", "main")
        try git(root.url, "clone", "-q", remote.path, b.path)
        tally.check(try export(b, "git clone"), expected: state, "git clone")
        try commitIfChanged(b, "Opened the clone")
        driver = Shell.run(folio, ["merge-driver", "--help"]).status == 0

        enum Round { case both, aOnly, bOnly }
        var usingDriver = false
        var addedBy: [String: String] = [:]   // which clone added a todo
        for round in 0..<8 {
            let context = "git round \(round + 1)"
            let kind: Round = round == 0 ? .aOnly : round == 1 ? .bOnly : round < 4 ? .both : [.both, .both, .aOnly, .bOnly][random.index(4)]
            if driver, round == 4 {
                for clone in [a, b] {
                    let setup = Shell.run(folio, ["merge-driver", "setup", clone.path])
                    if setup.status != 0 { throw Failure(description: "folio merge-driver setup: \(setup.errors)") }
                }
                try commitIfChanged(a, "Merge driver")
                try commitIfChanged(b, "Merge driver")
                usingDriver = true
            }
            if round == 2 {
                // An older commit checked out and back: nothing changes.
                try git(a, "checkout", "-q", "HEAD~1")
                tally.check(try export(a, "\(context): older commit"), expected: state, "\(context): git checkout of an older commit")
                try git(a, "checkout", "-q", "-f", "main")
                tally.check(try export(a, "\(context): back"), expected: state, "\(context): git checkout back")
                try commitIfChanged(a, "Back")
            }
            // Each clone touches only its half of the todos.
            var ids = state.keys.sorted()
            ids.shuffle(using: &random)
            var touchA = Array(ids.prefix(ids.count / 2)), touchB = Array(ids.dropFirst(ids.count / 2))
            var stateA = state, stateB = state
            // Each clone deletes a todo the other added, when its half has one, then writes more.
            func ops(_ touch: inout [String], other: String, _ prefix: String) -> [AppOp] {
                var ops: [AppOp] = []
                if let index = touch.firstIndex(where: { addedBy[$0] == other }) { ops.append(.delete(touch.remove(at: index))) }
                return ops + appOps(2 + random.index(5), &touch, prefix)
            }
            if kind != .bOnly {
                let ops = ops(&touchA, other: "B", "ga")
                try app(a, ops, context)
                for id in apply(ops, to: &stateA, listed: try export(a, context), context) { addedBy[id] = "A" }
                try commitIfChanged(a, "Todos of clone A")
            }
            if kind != .aOnly {
                let ops = ops(&touchB, other: "A", "gb")
                try app(b, ops, context)
                for id in apply(ops, to: &stateB, listed: try export(b, context), context) { addedBy[id] = "B" }
                try commitIfChanged(b, "Todos of clone B")
            }
            // A pushes, B pulls (a fast-forward, or a true merge), B pushes, A pulls.
            try git(a, "push", "-q", "origin", "main")
            let merged = EverydayModel.merge(base: state, folio: stateB, file: stateA)
            try pull(b, ours: stateB, expected: merged, driver: usingDriver, context)
            tally.check(try export(b, context), expected: merged, "\(context): clone B after its pull")
            try commitIfChanged(b, "Merged")
            try git(b, "push", "-q", "origin", "main")
            try pull(a, ours: stateA, expected: merged, driver: usingDriver, context)
            let listedA = try export(a, context)
            tally.check(listedA, expected: merged, "\(context): clone A after its pull")
            try commitIfChanged(a, "Merged")
            try git(a, "push", "-q", "origin", "main")
            try pull(b, ours: merged, expected: merged, driver: usingDriver, context)
            let listedB = try export(b, context)
            try commitIfChanged(b, "Merged")
            try git(b, "push", "-q", "origin", "main")
            try pull(a, ours: merged, expected: merged, driver: usingDriver, context)
            tally.agree(try export(a, context), listedB, "\(context): clones A and B after a round trip")
            _ = listedA
            state = merged
        }
    }

    /// `git pull` into `clone`; conflict markers (or a merge that does not parse) in the day file
    /// are first shown to Folio, which must refuse the file with path:line:column and keep it,
    /// then resolved by the model: the file gets the todos the model expects, taken from the
    /// two sides, and names both sides' revisions (its own revision, the other's in ancestors).
    private func pull(_ clone: URL, ours: State, expected: State, driver: Bool, _ context: String) throws {
        pulls += 1
        if driver { driverPulls += 1 }
        let result = try git(clone, "pull", "-q", "--no-rebase", "--no-edit", "origin", "main", allowFailure: true)
        let conflicted = try git(clone, "diff", "--name-only", "--diff-filter=U").output.split(separator: "\n").map(String.init)
        guard result.status == 0 || !conflicted.isEmpty else {
            throw Failure(description: "\(context): git pull failed: \(result.errors)")
        }
        let file = clone.appendingPathComponent(dayPath)
        let bytes = (try? Data(contentsOf: file)) ?? Data()
        let markers = String(decoding: bytes, as: UTF8.self).contains("<<<<<<<")
        if markers || (FileManager.default.fileExists(atPath: file.path) && Self.todos(inFile: bytes) == nil) {
            if markers { markerPulls += 1 }
            let refused = exportRun(clone)
            let place = "\(dayPath):[0-9]+:[0-9]+"
            if refused.errors.range(of: place, options: .regularExpression) == nil {
                refusals.append("\(context): Folio did not name \(dayPath):line:column (\(refused.status)): \(refused.errors.prefix(300))")
            }
            if refused.status == 0, let served = try? Self.todos(inExport: Data(refused.output.utf8), context) {
                tally.check(served, expected: ours, "\(context): what Folio serves while the file has conflict markers")
            }
            if (try? Data(contentsOf: file)) != bytes {
                refusals.append("\(context): Folio rewrote the file with conflict markers")
            }
            let (oursRef, theirsRef) = conflicted.isEmpty ? ("HEAD^1", "HEAD^2") : ("HEAD", "MERGE_HEAD")
            try resolve(
                file, ours: try git(clone, "show", "\(oursRef):\(dayPath)").output,
                theirs: try git(clone, "show", "\(theirsRef):\(dayPath)").output, expected: expected)
        }
        for path in conflicted where path != dayPath {
            // Derived files (the month's daily stats): the app recomputes them.
            try git(clone, "checkout", "--ours", "--", path)
        }
        if !conflicted.isEmpty {
            try git(clone, "add", "-A")
            try git(clone, "commit", "-q", "--no-edit")
        } else {
            try commitIfChanged(clone, "Resolved")
        }
    }

    /// Writes the day file a person resolving the conflict by the model writes.
    private func resolve(_ file: URL, ours: String, theirs: String, expected: State) throws {
        let mine = (try? JSONSerialization.jsonObject(with: Data(ours.utf8)) as? [String: Any]) ?? [:]
        let other = (try? JSONSerialization.jsonObject(with: Data(theirs.utf8)) as? [String: Any]) ?? [:]
        let mineEntities = mine["entities"] as? [String: [String: Any]] ?? [:]
        let otherEntities = other["entities"] as? [String: [String: Any]] ?? [:]
        var entities: [String: Any] = [:]
        for (id, item) in expected {
            let candidates = [mineEntities[id], otherEntities[id]].compactMap { $0 }
            var object =
                candidates.first { Item(title: $0["title"] as? String ?? "", done: $0["done"] as? Bool ?? false) == item }
                ?? candidates.first ?? [:]
            object["title"] = item.title
            object["done"] = item.done
            entities[id] = object
        }
        var resolved = mine
        resolved["entities"] = entities
        // Revisions (FORMAT.md): the content includes the other side's revision and ancestors.
        var ancestors = mine["ancestors"] as? [String: Int] ?? [:]
        let own = (mine["revision"] as? String)?.components(separatedBy: ":").first
        var named = other["ancestors"] as? [String: Int] ?? [:]
        if let revision = other["revision"] as? String {
            let parts = revision.components(separatedBy: ":")
            if parts.count == 3, let number = Int(parts[1]) { named[parts[0]] = max(named[parts[0]] ?? 0, number) }
        }
        for (writer, number) in named where writer != own { ancestors[writer] = max(ancestors[writer] ?? 0, number) }
        if !ancestors.isEmpty { resolved["ancestors"] = ancestors }
        let data = try JSONSerialization.data(withJSONObject: resolved, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        try (data + Data("\n".utf8)).write(to: file)
    }

    // MARK: - Phase 4: unison and rsync

    private func unison(_ c: URL, _ d: URL, _ extra: [String] = []) -> Shell.Result {
        unisonSyncs += 1
        return Shell.run(
            tools["unison"]!,
            [
                c.path, d.path, "-batch", "-auto", "-fastcheck", "false", "-confirmbigdel=false",
                "-ignore", "Name .folio", "-ignore", "Name outbox",
            ] + extra,
            environment: ["UNISON": folder("unison-home").path, "HOME": folder("home").path])
    }

    private func rsync(_ from: URL, _ to: URL) throws {
        rsyncs += 1
        // As FORMAT.md says to run rsync in turns: --checksum, because rsync skips a file whose size
        // and modification second equal the other side's (two day files written in one second
        // often do: in CI a todo added on one side and one deleted on the other were lost so), and
        // --delete, because a day file Folio removed (its last todo deleted) must go on the other
        // side too.
        let result = Shell.run(
            tools["rsync"]!,
            [
                "-a", "--checksum", "--delete", "--exclude", ".folio", "--exclude", "outbox",
                from.path + "/", to.path + "/",
            ])
        guard result.status == 0 else { throw Failure(description: "rsync: \(result.status): \(result.errors)") }
    }

    private func unisonAndRsync() throws {
        let c = folder("sync-c"), d = folder("sync-d")
        var state: State = [:]
        let seedOps = (0..<6).map { _ in AppOp.add(newTitle("u")) }
        try app(c, seedOps, "unison")
        apply(seedOps, to: &state, listed: try export(c, "unison"), "unison")
        let first = unison(c, d)
        guard first.status == 0 else { throw Failure(description: "the first unison sync: \(first.status): \(first.output) \(first.errors)") }
        tally.check(try export(d, "unison"), expected: state, "unison: the first sync")

        enum Round { case cOnly, dOnly, both, rsync }
        for round in 0..<7 {
            let context = "unison round \(round + 1)"
            let kind: Round = round < 4 ? [.cOnly, .dOnly, .both, .rsync][round] : [.cOnly, .dOnly, .both, .rsync][random.index(4)]
            var ids = state.keys.sorted()
            ids.shuffle(using: &random)
            var touchC = Array(ids.prefix(ids.count / 2)), touchD = Array(ids.dropFirst(ids.count / 2))
            var stateC = state, stateD = state
            if kind != .dOnly {
                let ops = appOps(2 + random.index(5), &touchC, "uc")
                try app(c, ops, context)
                apply(ops, to: &stateC, listed: try export(c, context), context)
            }
            if kind == .rsync {
                // rsync one way, the other app writes, rsync back.
                try rsync(c, d)
                tally.check(try export(d, context), expected: stateC, "\(context): D after rsync from C")
                stateD = stateC
                var touch = stateD.keys.sorted()
                let ops = appOps(2 + random.index(5), &touch, "ud")
                try app(d, ops, context)
                apply(ops, to: &stateD, listed: try export(d, context), context)
                try rsync(d, c)
                tally.check(try export(c, context), expected: stateD, "\(context): C after rsync from D")
                tally.agree(try export(c, context), try export(d, context), context)
                let again = unison(c, d)
                if again.status != 0 { notes.append("\(context): unison after rsync: \(again.status) \(again.output.suffix(200))") }
                state = stateD
                continue
            }
            if kind != .cOnly {
                let ops = appOps(2 + random.index(5), &touchD, "ud")
                try app(d, ops, context)
                apply(ops, to: &stateD, listed: try export(d, context), context)
            }
            let expected = EverydayModel.merge(base: state, folio: stateD, file: stateC)
            let sync = unison(c, d)
            var conflict = false
            if sync.status != 0 {
                // Both changed the day file: unison reports the conflict and skips it. C's file
                // is then taken; D's Folio merges it with what D wrote, and the merge goes back.
                conflict = true
                unisonConflicts += 1
                guard sync.status == 1 else { throw Failure(description: "\(context): unison: \(sync.status): \(sync.output) \(sync.errors)") }
                let prefer = unison(c, d, ["-prefer", c.path])
                guard prefer.status == 0 else { throw Failure(description: "\(context): unison -prefer: \(prefer.status): \(prefer.output) \(prefer.errors)") }
            }
            let listedD = try export(d, context)
            tally.check(listedD, expected: expected, "\(context): D after the sync")
            let back = unison(c, d)
            if back.status != 0 { notes.append("\(context): unison back: \(back.status) \(back.output.suffix(200))") }
            let listedC = try export(c, context)
            tally.check(listedC, expected: expected, "\(context): C after the sync back")
            let listedD2 = try export(d, context)
            if conflict, listedC != listedD2 {
                notes.append("\(context): C and D differ after a reported conflict")
            } else {
                tally.agree(listedC, listedD2, context)
            }
            state = expected
        }
    }
}

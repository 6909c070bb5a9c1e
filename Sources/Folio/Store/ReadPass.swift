/// A read's first pass, made without the shared lock (``Store`` `readOnce`): owned by the store's
/// state, begun and ended by the actor.
///
/// The pass is the answer only if it touched no file: a partition file read meanwhile may be
/// half of another process's checkpoint, so a pass that loaded a file (while catching up with
/// the journal, or in the read itself), or that needed one and put it off, is made again under
/// the shared lock. A read that would load files puts them off (``putsOffFileLoads``) so that
/// they are loaded once, in the locked pass, not twice.
struct ReadPass {
    /// Whether a lock-free pass is running and its body runs (reads put file loads off).
    private(set) var putsOffFileLoads = false
    private var running = false
    private var touchedFiles = false

    /// A pass begins, before it catches up with the journal.
    mutating func begin() {
        running = true
        touchedFiles = false
    }

    /// The pass's body begins: from here, loads are put off.
    mutating func beginBody() { putsOffFileLoads = true }

    /// Whether a lock-free pass is catching up with the journal (before its body).
    var catchesUp: Bool { running && !putsOffFileLoads }

    /// The pass ends. Returns whether it is the answer: it touched no file.
    mutating func end() -> Bool {
        defer { running = false; putsOffFileLoads = false; touchedFiles = false }
        return !touchedFiles
    }

    /// A partition file was read (loaded or reloaded).
    mutating func noteFileLoad() { if running { touchedFiles = true } }

    /// A read needed a file and left it for the locked pass.
    mutating func putOffFileLoad() { touchedFiles = true }
}

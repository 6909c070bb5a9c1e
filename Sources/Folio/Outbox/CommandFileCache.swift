/// The command files read lately, kept for the journal generation they were read in.
///
/// A drain window looks at each of its commands several times, each from another step: the head
/// of the queue, the sent mark, the acknowledgement and the entity's later commands. Each look
/// read and parsed the command's file again (about five reads per command sent). A command file
/// is never rewritten (FORMAT.md: only one a crash cut short, which does not parse and is never
/// kept here), and the generation's records are always applied on top of what a file says, so
/// within one generation a file read once says what a second read would: only files moved by a
/// checkpoint differ, and those changes are in the generation's records. The cache is dropped
/// when the generation changes, when this process checkpoints, and when another process did.
///
/// Bounded: the most recent ``capacity`` files (a few windows), so that reading a long queue
/// keeps no more in memory than a window needs.
struct CommandFileCache {
    /// How many files are kept at most (the oldest read goes first).
    static let capacity = 512

    private var generation: UInt64?
    private var commands: [String: JSONValue] = [:]
    private var order: [String] = []
    private var oldest = 0

    /// The command read from `path` in `generation`, if it was read then and is still kept.
    func command(at path: String, generation: UInt64?) -> JSONValue? {
        guard let generation, generation == self.generation else { return nil }
        return commands[path]
    }

    /// Keeps a command read whole from its file in `generation` (none: nothing is kept).
    mutating func keep(_ command: JSONValue, at path: String, generation: UInt64?) {
        guard let generation else { return }
        if generation != self.generation {
            forget()
            self.generation = generation
        }
        guard commands.updateValue(command, forKey: path) == nil else { return }
        order.append(path)
        if commands.count > Self.capacity {
            commands[order[oldest]] = nil
            oldest += 1
        }
        if oldest >= Self.capacity {
            order.removeFirst(oldest)
            oldest = 0
        }
    }

    /// Drops every command kept: the files may have changed.
    mutating func forget() {
        generation = nil
        commands = [:]
        order = []
        oldest = 0
    }
}

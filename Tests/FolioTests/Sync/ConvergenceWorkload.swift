import FolioCrashSupport

/// Generates a client's offline operations from a seed, applying each to the model as it goes, so
/// the next one sees it. Ids are unique per client (`c1-t7`, `c1-g8`), values fresh, so a field
/// never returns to an old value by chance.
struct ConvergenceWorkload {
    var random: SplitMix64
    private var counter = 0

    /// Days in three months, so todos move between days and between months (and years).
    static let days = ["2026-11-03", "2026-11-17", "2026-11-29", "2026-12-01", "2026-12-14", "2026-12-31", "2027-01-08"]

    init(seed: UInt64) { random = SplitMix64(seed: seed) }

    mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &random) }
    mutating func chance(_ probability: Double) -> Bool { Double.random(in: 0..<1, using: &random) < probability }
    mutating func pick<T>(_ items: [T]) -> T? { items.isEmpty ? nil : items[int(0...(items.count - 1))] }

    /// An entity to change: often one of the first few (ids sorted), so that clients meet on the
    /// same entities and their changes conflict.
    mutating func target(_ ids: [String]) -> String? {
        chance(0.4) ? pick(Array(ids.prefix(3))) : pick(ids)
    }

    private mutating func fresh(_ prefix: String, client: Int) -> String {
        counter += 1
        return "c\(client)-\(prefix)\(counter)"
    }

    /// The next transactions of `client` (one, or three for the move chain), already applied to
    /// its local state in `model`.
    /// - Parameters:
    ///   - prefer: When given, ids the operation should rather delete (entities this client
    ///     changed since its last sync: the deletes that follow a lost answer).
    ///   - avoid: Ids the operations must not touch (then no tag is deleted either, since that
    ///     touches the todos carrying it).
    mutating func next(
        _ model: inout ConvergenceModel, client: Int, round: Int, prefer: Set<String>? = nil,
        avoid: Set<String> = []
    ) -> [[ModelOperation]] {
        let local = model.clients[client].local
        let todos = local["todos", default: [:]].keys.sorted().filter { !avoid.contains($0) }
        let tags = local["tags", default: [:]].keys.sorted().filter { !avoid.contains($0) }
        let synced = todos.filter { model.clients[client].seen["todos"]?[$0] != nil }
        var transactions: [[ModelOperation]] = []
        func todo(_ id: String) -> ModelEntity { model.clients[client].local["todos"]![id]! }
        func otherDay(than id: String, month: Bool) -> String {
            guard case .string(let current)? = todo(id)["date"] else { return Self.days[0] }
            let candidates = Self.days.filter { month ? $0.prefix(7) != current.prefix(7) : ($0 != current && $0.prefix(7) == current.prefix(7)) }
            return pick(candidates) ?? pick(Self.days.filter { $0 != current })!
        }

        if let prefer, chance(0.6), let id = pick(todos.filter { prefer.contains($0) }) {
            // Often edited first, then deleted, in two transactions: while a sync runs beside
            // them, the edit may land between the send of the todo's pending command and its
            // acknowledgement, and the delete after it.
            transactions =
                chance(0.5)
                ? [
                    [.set(collection: "todos", id: id, changes: ["title": .string("title \(fresh("p", client: client))")])],
                    [.delete(collection: "todos", id: id)],
                ]
                : [[.delete(collection: "todos", id: id)]]
        } else {
            switch int(0...99) {
            case 0..<16:
                transactions = [[createTodo(client: client, tags: tags)]]
            case 16..<25 where !todos.isEmpty:
                let id = target(todos)!
                let changes: [String: ModelValue?] =
                    chance(0.5)
                    ? ["title": .string("title \(fresh("e", client: client))")]
                    : ["note": .string("note \(fresh("n", client: client))"), "title": .string("title \(fresh("e", client: client))")]
                transactions = [[.set(collection: "todos", id: id, changes: changes)]]
            case 25..<34 where !todos.isEmpty:
                let id = target(todos)!
                let done = todo(id)["done"] == .bool(true)
                transactions = [[.set(collection: "todos", id: id, changes: ["done": .bool(!done)])]]
            case 34..<52 where !todos.isEmpty:
                let id = target(todos)!
                transactions = [[.set(collection: "todos", id: id, changes: ["date": .string(otherDay(than: id, month: chance(0.45)))])]]
            case 52..<59 where !todos.isEmpty:
                transactions = [[.delete(collection: "todos", id: target(todos)!)]]
            case 59..<68 where !synced.isEmpty:
                // The chain of issue 12: move a synced todo, edit it, delete it, three transactions.
                let id = target(synced)!
                transactions = [
                    [.set(collection: "todos", id: id, changes: ["date": .string(otherDay(than: id, month: chance(0.5)))])],
                    [.set(collection: "todos", id: id, changes: ["title": .string("title \(fresh("m", client: client))")])],
                    [.delete(collection: "todos", id: id)],
                ]
            case 68..<72 where !todos.isEmpty:
                let tag: ModelValue? = pick(tags).map { .string($0) }
                transactions = [[.set(collection: "todos", id: target(todos)!, changes: ["tagID": chance(0.8) ? tag : nil])]]
            case 72..<77:
                let id = fresh("g", client: client)
                transactions = [[.create(collection: "tags", id: id, fields: ["name": .string("tag \(id)"), "color": color()])]]
            case 77..<86 where !tags.isEmpty:
                // Often a second change of the same tag follows: tags do not coalesce, so the second
                // command waits behind a first one that may meet a conflict.
                let id = target(tags)!
                transactions = [[.set(collection: "tags", id: id, changes: ["name": .string("tag \(fresh("r", client: client))")])]]
                if chance(0.7) {
                    let second: [String: ModelValue?] = chance(0.5) ? ["name": .string("tag \(fresh("r", client: client))")] : ["color": color()]
                    transactions.append([.set(collection: "tags", id: id, changes: second)])
                }
            case 86..<92 where !tags.isEmpty:
                transactions = [[.set(collection: "tags", id: target(tags)!, changes: ["color": color()])]]
            case 92..<95 where !tags.isEmpty && avoid.isEmpty:
                // Deleting a tag clears it from the todos that carry it, in the same transaction.
                let id = target(tags)!
                var operations: [ModelOperation] = [.delete(collection: "tags", id: id)]
                for todoID in todos where todo(todoID)["tagID"] == .string(id) {
                    operations.append(.set(collection: "todos", id: todoID, changes: ["tagID": nil]))
                }
                transactions = [operations]
            case 95..<100:
                let about = chance(0.5) ? pick(todos) : nil
                transactions = [[.custom(token: "stamp-" + fresh("s", client: client) + "-r\(round)", about: about)]]
            default:
                transactions = [[createTodo(client: client, tags: tags)]]
            }
        }
        for transaction in transactions {
            for operation in transaction { model.apply(operation, client: client) }
            model.endTransaction(client: client)
        }
        return transactions
    }

    private mutating func createTodo(client: Int, tags: [String]) -> ModelOperation {
        let id = fresh("t", client: client)
        var fields: ModelEntity = [
            "title": .string("title \(id)"), "date": .string(pick(Self.days)!), "done": .bool(false), "note": .string(""),
        ]
        if chance(0.5), let tag = pick(tags) { fields["tagID"] = .string(tag) }
        return .create(collection: "todos", id: id, fields: fields)
    }

    private mutating func color() -> ModelValue {
        .string("#" + String(random.next() & 0xFF_FFFF, radix: 16))
    }
}

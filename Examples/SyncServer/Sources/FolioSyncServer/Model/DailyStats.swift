/// The statistics of one day, computed from that day's todos.
enum DailyStats {
    /// `{"id": day, "date": day, "total", "completed", "tagStats": [{"id": "<day>:<tagID>",
    /// "tagID", "count"}]}`, tagStats counting the done todos of each tag, sorted by tagID; nil
    /// when the day has no todos (it then has no statistics).
    static func compute(day: String, todos: [TodoDocument]) -> DailyStatDocument? {
        guard !todos.isEmpty else { return nil }
        let done = todos.filter(\.isDone)
        var counts: [String: Int64] = [:]
        for todo in done {
            if let tagID = todo.tagID { counts[tagID, default: 0] += 1 }
        }
        let tagStats: [JSONValue] = counts.keys.sorted().map { tagID in
            .object(["id": .string("\(day):\(tagID)"), "tagID": .string(tagID), "count": .integer(counts[tagID] ?? 0)])
        }
        let fields: JSONObject = [
            "id": .string(day), "date": .string(day),
            "total": .integer(Int64(todos.count)), "completed": .integer(Int64(done.count)),
            "tagStats": .array(tagStats),
        ]
        return DailyStatDocument(fields: fields, date: day)
    }
}

/// Field-by-field three-way merge of JSON objects (PROTOCOL.md, "Conflict policies").
///
/// A field changed locally (local differs from base) keeps the local value; a field changed only
/// on the server keeps the server's; a field both changed to different values keeps the local one.
/// Nested objects merge the same way, field by field; arrays and scalars are single values.
/// A missing base (the entity was created locally) counts every local field as changed.
enum ThreeWayMerge {
    static func merge(base: JSONValue?, local: JSONValue, server: JSONValue) -> JSONValue {
        guard case .object(let localFields) = local, case .object(let serverFields) = server else {
            return local == server || local == base ? server : local
        }
        let baseFields = base?.objectValue
        var merged: [String: JSONValue] = [:]
        for key in Set(localFields.keys).union(serverFields.keys) {
            let before = base == nil ? nil : baseFields?[key]
            let mine = localFields[key]
            let theirs = serverFields[key]
            let value: JSONValue?
            if mine == theirs {
                value = mine
            } else if base != nil && mine == before {
                value = theirs   // changed on the server only
            } else if base != nil && theirs == before {
                value = mine   // changed locally only
            } else if let mine, let theirs, mine.objectValue != nil, theirs.objectValue != nil {
                value = merge(base: before, local: mine, server: theirs)
            } else {
                value = mine ?? (base == nil ? theirs : nil)   // both changed: local wins
            }
            if let value { merged[key] = value }
        }
        return .object(merged)
    }
}

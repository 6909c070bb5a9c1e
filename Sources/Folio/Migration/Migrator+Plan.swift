public import Foundation

extension Migrator {
    /// A migrator read from a JSON migration plan, for JSON-level migrations without Swift code
    /// (`folio migrate --plan`, docs/ChangingModels.md):
    ///
    /// ```json
    /// {"migrations": [
    ///   {"name": "2-weather", "steps": [
    ///     {"setDefault": "weather", "value": "unknown", "in": "entries"},
    ///     {"renameField": "title", "to": "text", "in": "entries"},
    ///     {"removeField": "draft", "in": "entries"},
    ///     {"convertField": "mood", "to": "number", "in": "entries"},
    ///     {"renameCollection": "tags", "to": "labels"},
    ///     {"repartition": "entries", "by": "month"}
    ///   ], "enqueueCommandsFor": []}
    /// ]}
    /// ```
    ///
    /// `convertField` converts numbers written as strings to numbers (`"to": "number"`) or any
    /// number or boolean to a string (`"to": "string"`); a value it cannot convert fails the
    /// migration. `repartition` by `month` or `none` needs no key.
    /// - Parameter plan: The plan's bytes.
    /// - Throws: ``FolioError`` with ``FolioError/Code/invalidQuery`` naming the step at fault.
    public init(plan: Data) throws {
        self.init()
        let value: JSONValue
        do { value = try JSONParser.parse(Array(plan)) } catch {
            throw FolioError(.invalidQuery, "the migration plan is not JSON: \(error.message)", line: error.line, column: error.column)
        }
        guard case .array(let migrations)? = value["migrations"] else {
            throw FolioError(.invalidQuery, "the migration plan needs a \"migrations\" array")
        }
        for (index, migration) in migrations.enumerated() {
            guard let name = migration["name"]?.stringValue, case .array(let steps)? = migration["steps"] else {
                throw FolioError(.invalidQuery, "migration \(index + 1) of the plan needs a \"name\" and a \"steps\" array")
            }
            var enqueue: Set<String> = []
            if case .array(let names)? = migration["enqueueCommandsFor"] { enqueue = Set(names.compactMap(\.stringValue)) }
            registerMigration(name, enqueuingCommandsFor: enqueue, try steps.map { step throws(FolioError) in try Self.step(step, in: name) })
        }
    }

    private static func step(_ json: JSONValue, in migration: String) throws(FolioError) -> MigrationStep {
        func text(_ key: String) throws(FolioError) -> String {
            guard let value = json[key]?.stringValue, !value.isEmpty else {
                throw FolioError(
                    .invalidQuery,
                    "a step of migration \"\(migration)\" needs a string \"\(key)\": \(String(decoding: JSONWriter.compact(json), as: UTF8.self))")
            }
            return value
        }
        if json["renameField"] != nil { return .renameField(try text("renameField"), to: try text("to"), in: try text("in")) }
        if json["removeField"] != nil { return .removeField(try text("removeField"), in: try text("in")) }
        if json["setDefault"] != nil {
            guard let value = json["value"] else { throw FolioError(.invalidQuery, "setDefault in migration \"\(migration)\" needs a \"value\"") }
            return .setDefault(try text("setDefault"), value, in: try text("in"))
        }
        if json["renameCollection"] != nil { return .renameCollection(try text("renameCollection"), to: try text("to")) }
        if json["repartition"] != nil {
            guard let granularity = PartitionGranularity(rawValue: try text("by")), granularity != .day else {
                throw FolioError(
                    .invalidQuery, "repartition in migration \"\(migration)\": \"by\" must be month or none in a plan (by day needs a key: write it in Swift)")
            }
            return .repartition(try text("repartition"), by: granularity)
        }
        if json["convertField"] != nil {
            let field = try text("convertField"), target = try text("to")
            guard target == "number" || target == "string" else {
                throw FolioError(.invalidQuery, "convertField in migration \"\(migration)\": \"to\" must be number or string")
            }
            return .changeField(field, in: try text("in")) { value throws(FolioError) in
                switch (value, target) {
                case (nil, _), (.null?, _), (.number?, "number"), (.string?, "string"): return value
                case (.string(let text)?, "number"):
                    // A number's text must be a JSON number, exactly as written.
                    let parsed: JSONValue
                    do { parsed = try JSONParser.parse(Array(text.utf8)) } catch {
                        throw FolioError(.migrationFailed, "\"\(text)\" is not a number")
                    }
                    guard case .number = parsed else { throw FolioError(.migrationFailed, "\"\(text)\" is not a number") }
                    return parsed
                case (.number(let text)?, "string"): return .string(text)
                case (.bool(let flag)?, "string"): return .string(flag ? "true" : "false")
                default: throw FolioError(.migrationFailed, "cannot convert \(String(decoding: JSONWriter.compact(value!), as: UTF8.self)) to a \(target)")
                }
            }
        }
        throw FolioError(
            .invalidQuery,
            "unknown step in migration \"\(migration)\": \(String(decoding: JSONWriter.compact(json), as: UTF8.self)) (known: renameField, removeField, setDefault, convertField, renameCollection, repartition)"
        )
    }
}

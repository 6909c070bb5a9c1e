@testable import Folio
import Foundation
import Testing

/// Reading a store's files the way a person would, to check migrations against a model.
enum StoreFiles {
    /// Every entity of a collection, from its files: id → (partition file, JSON object).
    static func entities(_ folder: TemporaryFolder, _ collection: String) throws -> [String: (path: String, json: [String: Any])] {
        var result: [String: (path: String, json: [String: Any])] = [:]
        for path in folder.allFiles() where path == collection + ".json" || (path.hasPrefix(collection + "/") && path.hasSuffix(".json")) {
            let file = try JSONSerialization.jsonObject(with: folder.bytes(path)) as! [String: Any]
            for (id, json) in file["entities"] as! [String: Any] {
                #expect(result[id] == nil, "\(id) is in two files")
                result[id] = (path, json as! [String: Any])
            }
        }
        return result
    }

    /// The schema recorded in folio.json.
    static func migrations(_ folder: TemporaryFolder) throws -> [String] {
        let marker = try JSONSerialization.jsonObject(with: folder.bytes("folio.json")) as! [String: Any]
        return (marker["schema"] as? [String: Any])?["migrations"] as? [String] ?? []
    }

    /// Every file's bytes, machinery excepted (`.folio/`), to tell whether anything changed.
    static func snapshot(_ folder: TemporaryFolder) throws -> [String: Data] {
        var result: [String: Data] = [:]
        for path in folder.allFiles() where !path.hasPrefix(".folio/") { result[path] = try folder.bytes(path) }
        return result
    }

    static func open(_ folder: TemporaryFolder, _ migrator: Migrator, log: LogRecorder? = nil) async throws -> Store {
        var configuration = Store.Configuration.testing(log: log?.handler)
        configuration.migrator = migrator
        return try await Store.open(at: folder.url, configuration: configuration)
    }
}

/// The JSON of an Any, compared as canonical text (for model comparisons).
func canonical(_ value: Any) -> String {
    String(decoding: try! JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .fragmentsAllowed]), as: UTF8.self)
}

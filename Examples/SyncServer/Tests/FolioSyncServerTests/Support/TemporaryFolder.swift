import Foundation

/// A fresh folder under the system's temp directory, removed when the value goes away.
final class TemporaryFolder: Sendable {
    let url: URL

    init(_ name: String = "ServerData") throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("folio-sync-server-tests-\(UUID().uuidString)")
            .appendingPathComponent(name)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
    }

    deinit {
        do { try FileManager.default.removeItem(at: url.deletingLastPathComponent()) } catch {
            // A leftover temp folder is harmless; say so rather than hide it.
            FileHandle.standardError.write(Data("could not remove \(url.path): \(error)\n".utf8))
        }
    }

    /// Another folder next to this one (a client's store).
    func sibling(_ name: String) -> URL { url.deletingLastPathComponent().appendingPathComponent(name) }

    func file(_ relative: String) -> URL { url.appendingPathComponent(relative) }

    func exists(_ relative: String) -> Bool { FileManager.default.fileExists(atPath: file(relative).path) }

    /// A JSON file of the folder, parsed.
    func json(_ relative: String) throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: file(relative)))
        return object as? [String: Any] ?? [:]
    }
}

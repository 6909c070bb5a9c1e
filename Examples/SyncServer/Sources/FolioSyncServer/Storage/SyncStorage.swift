import Foundation

/// Where the server keeps its data: a Folio folder (``FolderStorage``, the default) or
/// PostgreSQL (``PostgresStorage``). Every operation works on one owner's data and sees nothing
/// of any other owner's.
///
/// Both storages run the same ``PushApplier`` and build their answers with ``ReadAnswers``, so
/// a client cannot tell them apart (the conformance suite runs against both).
protocol SyncStorage: Sendable {
    /// Applies pushes in order in one transaction of the owner's data (PROTOCOL.md: each as if
    /// alone, stopping after the first that does not succeed).
    /// - Returns: One response per push processed.
    /// - Throws: A storage failure; then nothing was applied.
    func apply(_ pushes: [Result<Push, RequestError>], for owner: Owner, now: Date) async throws -> [APIResponse]
    /// `GET {collection}/{id}`.
    func entity(_ kind: CollectionKind, id: String, for owner: Owner) async throws -> APIResponse
    /// `GET {collection}?partition=KEY`.
    func partition(_ kind: CollectionKind, key: String, for owner: Owner) async throws -> APIResponse
    /// `GET {collection}?since=CURSOR`, at most `pageSize` changes.
    func changes(_ kind: CollectionKind, after cursor: Int64, pageSize: Int, for owner: Owner) async throws -> APIResponse
    /// Forgets the remembered responses stored on the UTC days up to `lastExpiredDay`, of every
    /// owner.
    /// - Returns: How many were forgotten.
    func forgetIdempotencyRecords(through lastExpiredDay: String) async throws -> Int
    /// Throws unless the storage answers (the readiness endpoint).
    func checkReady() async throws
    /// Closes the storage, after the HTTP server stopped.
    func close() async throws
}

/// The owner of a piece of the server's data: every token maps to one, and every entity,
/// idempotency key and feed belongs to one.
struct Owner: Hashable, Sendable, CustomStringConvertible {
    /// The owner of everything when the server has one token or none.
    static let shared = Owner(validName: "shared")

    let name: String

    private init(validName: String) { name = validName }

    /// An owner named in a tokens file: 1–64 of `A–Z a–z 0–9 . _ -`, not starting with a dot
    /// (the name becomes a folder in the folder storage).
    init?(_ name: String) {
        guard (1...64).contains(name.utf8.count), !name.hasPrefix("."),
            name.utf8.allSatisfy({ $0.isASCIILetterOrDigit || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") })
        else { return nil }
        self.name = name
    }

    var description: String { name }
}

extension UInt8 {
    fileprivate var isASCIILetterOrDigit: Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(self) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(self)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self)
    }
}

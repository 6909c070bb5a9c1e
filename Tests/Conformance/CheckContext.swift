import Foundation

/// What the checks share: the options, a raw HTTP client, and ids and keys drawn from the seed.
///
/// Thread safety: `lock` guards the generator and the counter; everything else is immutable.
final class CheckContext: @unchecked Sendable {
    let options: ConformanceOptions
    let client: RawHTTPClient
    private let lock = NSLock()
    private var generator: UInt64
    private var keyCounter = 0

    init(options: ConformanceOptions) {
        self.options = options
        var basePath = options.baseURL.path
        if !basePath.hasSuffix("/") { basePath += "/" }
        client = RawHTTPClient(
            host: options.baseURL.host ?? "127.0.0.1", port: UInt16(options.baseURL.port ?? 80), basePath: basePath,
            timeout: options.timeout)
        generator = options.seed
    }

    // MARK: Names

    /// The next pseudo-random 64 bits (SplitMix64).
    private func next() -> UInt64 {
        lock.lock()
        defer { lock.unlock() }
        generator &+= 0x9E37_79B9_7F4A_7C15
        var z = generator
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number in `0..<bound`, from the seed.
    func random(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }

    /// A fresh uppercase UUID, from the seed.
    func newID() -> String {
        let high = next(), low = next()
        let hex = String(format: "%016llX%016llX", high, low)
        let characters = Array(hex)
        func part(_ range: Range<Int>) -> String { String(characters[range]) }
        return "\(part(0..<8))-\(part(8..<12))-4\(part(13..<16))-A\(part(17..<20))-\(part(20..<32))"
    }

    /// A fresh idempotency key.
    func newKey() -> String {
        let number = lock.withLock { () -> Int in
            keyCounter += 1
            return keyCounter
        }
        return "folio-conformance-\(options.seed)-\(String(next() % 1_000_000_000, radix: 36))-\(number)"
    }

    /// The first collection, where most checks run.
    var collection: ConformanceOptions.Collection { options.collections[0] }

    /// A collection that accepts any valid id, if the options name one.
    var anyIDCollection: ConformanceOptions.Collection? { options.collections.first { $0.acceptsAnyID } }

    // MARK: Bodies

    /// The sample entity of `collection` with `id`, its edit member set to `note`.
    func entity(_ collection: ConformanceOptions.Collection, id: String, note: String) -> JSON {
        let escaped = String(JSON.quote(id).dropFirst().dropLast())
        var value = (try? JSON.parse(collection.sample.replacingOccurrences(of: "$ID", with: escaped))) ?? .object([:])
        if case .object(var members) = value {
            members[options.editMember] = .string(note)
            value = .object(members)
        }
        return value
    }

    // MARK: Requests

    /// The path of an entity, relative to the base: each segment percent-encoded.
    func path(_ collection: String, _ id: String? = nil) -> String {
        var path = Self.encodeSegment(collection)
        if let id { path += "/" + Self.encodeSegment(id) }
        return path
    }

    /// Every byte outside `A–Z a–z 0–9 - . _ ~` as `%XX` (PROTOCOL.md).
    static func encodeSegment(_ text: String) -> String {
        var result = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                result.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                result += String(format: "%%%02X", byte)
            }
        }
        return result
    }

    /// The `Authorization` header for the server's token, if any.
    var authorization: [(String, String)] { options.token.map { [("Authorization", "Bearer \($0)")] } ?? [] }

    /// Sends a request with the token (unless `headers` carry their own `Authorization`).
    func send(_ method: String, _ path: String, headers: [(String, String)] = [], body: Data? = nil) throws -> RawResponse {
        let ownAuthorization = headers.contains { $0.0.lowercased() == "authorization" }
        return try client.send(method, path, headers: (ownAuthorization ? [] : authorization) + headers, body: body)
    }

    /// A precondition for a push.
    enum Precondition {
        case none
        case create
        case version(String)
    }

    /// `PUT {collection}/{id}` with a precondition and a fresh (or given) key.
    func put(
        _ collection: ConformanceOptions.Collection, _ id: String, body: Data, _ precondition: Precondition,
        key: String? = nil, extraHeaders: [(String, String)] = []
    ) throws -> RawResponse {
        var headers: [(String, String)] = [("Idempotency-Key", key ?? newKey()), ("Folio-Partition", collection.partition)]
        switch precondition {
        case .none: break
        case .create: headers.append(("If-None-Match", "*"))
        case .version(let version): headers.append(("If-Match", "\"\(version)\""))
        }
        return try send("PUT", path(collection.name, id), headers: headers + extraHeaders, body: body)
    }

    /// `DELETE {collection}/{id}` with a precondition and a fresh (or given) key.
    func delete(_ collection: ConformanceOptions.Collection, _ id: String, _ precondition: Precondition, key: String? = nil) throws -> RawResponse {
        var headers: [(String, String)] = [("Idempotency-Key", key ?? newKey()), ("Folio-Partition", collection.partition)]
        if case .version(let version) = precondition { headers.append(("If-Match", "\"\(version)\"")) }
        return try send("DELETE", path(collection.name, id), headers: headers)
    }

    /// Creates an entity and returns its body and version; fails the check unless it is a 201 with an ETag.
    func create(_ collection: ConformanceOptions.Collection, _ id: String, note: String = "created") throws -> (entity: JSON, version: String) {
        let entity = entity(collection, id: id, note: note)
        let answer = try put(collection, id, body: entity.data, .create)
        guard answer.status == 201 else { throw CheckFailure("PUT \(id) with If-None-Match: * (a create) answered \(answer.summary), not 201") }
        return (entity, try version(of: answer, "the create of \(id)"))
    }

    /// The version in an answer's `ETag` (quotes and `W/` removed); fails when there is none.
    func version(of answer: RawResponse, _ what: String) throws -> String {
        guard let etag = answer.header("ETag"), let version = Self.version(etag) else {
            throw CheckFailure("\(what) answered \(answer.summary) without a quoted ETag")
        }
        return version
    }

    /// `"7"` or `W/"7"` as `7`; nil when not quoted.
    static func version(_ etag: String) -> String? {
        var text = Substring(etag.trimmingCharacters(in: .whitespaces))
        if text.hasPrefix("W/") { text = text.dropFirst(2) }
        guard text.count >= 2, text.hasPrefix("\""), text.hasSuffix("\"") else { return nil }
        return String(text.dropFirst().dropLast())
    }

    // MARK: Pulls

    /// An entity of a pull: its version and JSON.
    struct Pulled {
        var version: String?
        var entity: JSON
    }

    /// `GET {collection}?partition=KEY`: the partition by id; fails on anything but a 200 whose
    /// body is `{"entities": [{"id", "version", "entity"}]}` with each id once.
    func pullPartition(_ collection: String, _ partition: String) throws -> [String: Pulled] {
        let answer = try send("GET", path(collection) + "?partition=" + Self.encodeSegment(partition))
        guard answer.status == 200 else { throw CheckFailure("GET \(collection)?partition=\(partition) answered \(answer.summary), not 200") }
        guard let list = answer.json?["entities"]?.arrayValue else {
            throw CheckFailure("GET \(collection)?partition=\(partition): the body has no \"entities\" array: \(answer.summary)")
        }
        var result: [String: Pulled] = [:]
        for (index, item) in list.enumerated() {
            guard let id = item["id"]?.stringValue else { throw CheckFailure("entities[\(index)].id is not a string") }
            guard let entity = item["entity"], entity.isObject else { throw CheckFailure("entities[\(index)].entity is not an object") }
            guard result[id] == nil else { throw CheckFailure("the partition lists id \(id) twice") }
            let version: String?
            switch item["version"] {
            case .string(let text)?: version = text
            case .number?: version = item["version"]!.description
            default: version = nil
            }
            result[id] = Pulled(version: version, entity: entity)
        }
        return result
    }

    /// Fails unless `answer` has `status` (one of them).
    func expect(_ answer: RawResponse, _ statuses: Set<Int>, _ what: String) throws {
        guard statuses.contains(answer.status) else {
            throw CheckFailure("\(what) answered \(answer.summary), not \(statuses.sorted().map(String.init).joined(separator: " or "))")
        }
    }

    /// Fails unless the entity is in its partition with this version and JSON (or absent when nil).
    func expectStored(_ collection: ConformanceOptions.Collection, _ id: String, _ expected: (entity: JSON, version: String)?, _ what: String) throws {
        let pulled = try pullPartition(collection.name, collection.partition)[id]
        switch (expected, pulled) {
        case (nil, nil): return
        case (nil, let pulled?): throw CheckFailure("\(what): the partition still lists \(id) (version \(pulled.version ?? "none"))")
        case (let expected?, nil): throw CheckFailure("\(what): the partition does not list \(id) (expected version \(expected.version))")
        case (let expected?, let pulled?):
            guard pulled.version == expected.version else {
                throw CheckFailure("\(what): the partition lists \(id) at version \(pulled.version ?? "none"), not \(expected.version)")
            }
            guard pulled.entity == expected.entity else {
                throw CheckFailure("\(what): the partition lists \(id) as \(pulled.entity), not \(expected.entity)")
            }
        }
    }
}

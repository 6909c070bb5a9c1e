public import Foundation
#if canImport(FoundationNetworking)
internal import FoundationNetworking
#endif

/// The transport for the HTTP protocol of PROTOCOL.md, over URLSession.
///
/// ```swift
/// let transport = HTTPTransport(baseURL: URL(string: "https://api.example.com/sync/")!,
///                               auth: TokenAuth(session: session))
/// ```
///
/// On a 401 it asks the auth provider for fresh credentials and tries once more. Every answer is
/// checked: a body over ``Options/maxResponseBytes`` or one that is not the JSON the protocol
/// specifies becomes an outcome or an error naming what is wrong, never a crash.
public final class HTTPTransport: BatchTransport {
    /// Limits and tuning. The defaults suit an app.
    public struct Options: Sendable {
        /// How long one request may take before it is abandoned (and retried). Default 30 s.
        public var requestTimeout: Duration = .seconds(30)
        /// The largest response body accepted. Default 16 MiB.
        public var maxResponseBytes: Int = 16 << 20
        /// The most commands sent in one `POST {base}/_batch` request; 1 (the default) sends one
        /// request per command, for servers without batches.
        public var batchSize: Int = 1
        /// Headers added to every request (an API key, a client version…).
        public var headers: [String: String] = [:]

        /// The defaults.
        public init() {}
    }

    let baseURL: URL
    let auth: (any AuthProvider)?
    let options: Options
    let loader: BoundedLoader

    /// ``Options/batchSize``, at least 1.
    public var maxBatchSize: Int { max(1, options.batchSize) }

    /// Creates a transport.
    /// - Parameters:
    ///   - baseURL: The protocol's `{base}`, e.g. `https://api.example.com/sync/`.
    ///   - auth: Gives the `Authorization` header, if the server wants one.
    ///   - options: Timeouts, limits, batching.
    public init(baseURL: URL, auth: (any AuthProvider)? = nil, options: Options = Options()) {
        self.baseURL = baseURL
        self.auth = auth
        self.options = options
        let configuration = URLSessionConfiguration.ephemeral
        let seconds = Double(options.requestTimeout.components.seconds) + Double(options.requestTimeout.components.attoseconds) * 1e-18
        configuration.timeoutIntervalForRequest = seconds
        configuration.timeoutIntervalForResource = seconds
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        configuration.httpCookieStorage = nil
        self.loader = BoundedLoader(configuration: configuration, limit: options.maxResponseBytes)
    }

    deinit { loader.invalidate() }

    // MARK: Push

    /// Sends one command as PROTOCOL.md says: `PUT` or `DELETE {base}/{collection}/{id}`, or
    /// `POST {base}/_commands/{name}`, with its idempotency key and precondition.
    /// - Parameter request: The command, its body and precondition.
    /// - Returns: What the server did, from its status (PROTOCOL.md, "Responses to a push"); a
    ///   network failure is ``PushOutcome/unreachable(reason:)``.
    /// - Throws: Nothing today: every failure is an outcome.
    public func push(_ request: PushRequest) async throws -> PushOutcome {
        let (method, path) = Self.route(request.command)
        var headers = Self.pushHeaders(request)
        if request.body != nil { headers["Content-Type"] = "application/json" }
        let answer = await send(method: method, path: path, headers: headers, body: request.body)
        return Self.outcome(of: answer, for: request.command)
    }

    /// Sends consecutive commands in one `POST {base}/_batch` (PROTOCOL.md, "Batches"); a single
    /// command is sent alone.
    /// - Parameter requests: The commands, in queue order.
    /// - Returns: One outcome per request the server handled, in order; if the batch request
    ///   itself failed, one outcome for the first command.
    /// - Throws: ``FolioError`` if the batch's body cannot be built from the commands.
    public func push(batch requests: [PushRequest]) async throws -> [PushOutcome] {
        if requests.count == 1 { return [try await push(requests[0])] }
        let body = Data(try Self.batchBody(requests))
        let answer = await send(method: "POST", path: "_batch", headers: ["Content-Type": "application/json"], body: body)
        guard case .response(let status, _, let data) = answer, HTTPResponseClass(status: status) == .success else {
            // The batch itself failed: as if its first request had.
            return [Self.outcome(of: answer, for: requests[0].command)]
        }
        let parsed: JSONValue
        do { parsed = try Self.parse(data, what: "the batch response") } catch {
            return [.retryLater(reason: error.message, status: status, after: nil)]
        }
        guard case .array(let responses)? = parsed["responses"] else {
            return [.retryLater(reason: "the batch response has no \"responses\" array", status: status, after: nil)]
        }
        var outcomes: [PushOutcome] = []
        for (index, response) in responses.prefix(requests.count).enumerated() {
            guard let itemStatus = response["status"]?.integerValue, (100..<600).contains(itemStatus) else {
                outcomes.append(.retryLater(reason: "the batch response's responses[\(index)].status is not an HTTP status", status: status, after: nil))
                break
            }
            var itemHeaders: [String: String] = [:]
            for (name, value) in response["headers"]?.objectValue ?? [:] {
                if let text = value.stringValue { itemHeaders[name.lowercased()] = text }
            }
            // The body as parsed with the whole response: parsed once, written once (if at all).
            let outcome = Self.outcome(
                of: .response(Int(itemStatus), itemHeaders, Data()), for: requests[index].command,
                parsedBody: response["body"] ?? .null)
            outcomes.append(outcome)
            guard case .applied = outcome else { break }
        }
        return outcomes
    }

    static func route(_ command: OutboxCommand) -> (method: String, path: String) {
        let collection = HTTPHeaders.segment(command.collection ?? "")
        let id = HTTPHeaders.segment(command.entityID ?? "")
        switch command.operation {
        case .upsert: return ("PUT", collection + "/" + id)
        case .delete: return ("DELETE", collection + "/" + id)
        case .custom(let name): return ("POST", "_commands/" + HTTPHeaders.segment(name))
        }
    }

    static func pushHeaders(_ request: PushRequest) -> [String: String] {
        var headers = ["Idempotency-Key": request.idempotencyKey]
        switch request.precondition {
        case .version(let version): headers["If-Match"] = "\"" + version + "\""
        case .absent: headers["If-None-Match"] = "*"
        case .none: break
        }
        let command = request.command
        switch command.operation {
        case .upsert, .delete: headers["Folio-Partition"] = command.partition ?? ""
        case .custom:
            if let collection = command.collection, let id = command.entityID {
                headers["Folio-Entity"] = collection + "/" + HTTPHeaders.segment(id)
            }
        }
        return headers
    }

    /// What an answer to a push means (PROTOCOL.md, "Responses to a push").
    /// - Parameter parsedBody: The body already parsed (an item of a batch response, `.null` for
    ///   none); then the answer's own body bytes are ignored.
    static func outcome(of answer: Answer, for command: OutboxCommand, parsedBody: JSONValue? = nil) -> PushOutcome {
        let status: Int, headers: [String: String], rawBody: Data
        switch answer {
        case .unreachable(let reason): return .unreachable(reason: reason)
        case .tooLarge(let status, let limit):
            return .retryLater(reason: "the server's answer is larger than the \(limit)-byte limit", status: status, after: nil)
        case .unauthorized(let reason): return .unauthorized(reason: reason)
        case .redirected(let reason): return .retryLater(reason: reason, status: nil, after: nil)
        case .response(let s, let h, let b): (status, headers, rawBody) = (s, h, b)
        }
        // Only the answers that quote their body need its bytes.
        func rejected(_ reason: String) -> PushOutcome {
            let body = parsedBody.map { $0 == .null ? Data() : Data(JSONWriter.compact($0)) } ?? rawBody
            return .rejected(FailureReason(reason, status: status, details: ["body": HTTPHeaders.excerpt(body)]))
        }
        let version = HTTPHeaders.version(fromETag: headers["etag"])
        if command.operation == .delete && (status == 404 || status == 410) { return .applied(version: nil, entity: nil) }
        // A PUT over a version the server no longer has: deleted there (PROTOCOL.md).
        if command.operation == .upsert && (status == 404 || status == 410) { return .conflict(version: nil, entity: nil) }
        if status == 413 { return rejected("the server refused the command as too large for it (413)") }
        let responseClass = HTTPResponseClass(status: status)
        switch responseClass {
        case .success where command.operation != .upsert:
            return .applied(version: version, entity: nil)
        case .success, .conflict:
            let entity: Data?
            do {
                entity = try entityBody(rawBody, parsed: parsedBody, what: "the server's \(status) answer", about: command)
            } catch {
                return .retryLater(reason: error.message, status: status, after: nil)
            }
            return responseClass == .success
                ? .applied(version: version, entity: entity) : .conflict(version: entity == nil ? nil : version, entity: entity)
        case .transient:
            return .retryLater(reason: "the server answered \(status)", status: status, after: HTTPHeaders.retryAfter(headers["retry-after"]))
        case .unauthorized:
            return .unauthorized(reason: "the server answered 401 to fresh credentials")
        case .redirect:
            return .retryLater(reason: "the server answered \(status) (a redirect) with no usable Location", status: status, after: nil)
        case .permanent:
            return rejected("the server refused the command with status \(status)")
        }
    }

    /// An entity in a body: nil for an empty body or `null`, else a JSON object, compacted. An
    /// entity whose `id` is not the command's is an answer about something else: unusable.
    /// - Parameter parsed: The body already parsed, if it was (`.null` for none).
    static func entityBody(_ body: Data, parsed: JSONValue?, what: String, about command: OutboxCommand) throws(FolioError) -> Data? {
        let value: JSONValue
        if let parsed {
            value = parsed
        } else {
            if body.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) { return nil }
            value = try parse(body, what: what)
        }
        if value == .null { return nil }
        guard value.objectValue != nil else { throw FolioError(.badResponse, "\(what) is not a JSON object") }
        if let expected = command.entityID, let id = value["id"] {
            let text = id.stringValue ?? id.integerValue.map(String.init)
            // Bytes, not canonical equivalence: "café" spelt two ways is two entities.
            guard let text, Array(text.utf8) == Array(expected.utf8) else {
                throw FolioError(
                    .badResponse,
                    "\(what) is about another entity (id \(FolioError.quoted(text ?? "\(id)"))), "
                        + "not \(FolioError.quoted(expected)): unusable, nothing stored")
            }
        }
        return Data(JSONWriter.compact(value))
    }

    static func parse(_ body: Data, what: String) throws(FolioError) -> JSONValue {
        do {
            return try JSONParser.parse([UInt8](body))
        } catch {
            throw FolioError(
                .badResponse,
                "\(what) is not valid JSON (line \(error.line), column \(error.column): \(error.message)): "
                    + HTTPHeaders.excerpt(body, limit: 200))
        }
    }
}

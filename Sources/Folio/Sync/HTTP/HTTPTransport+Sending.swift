internal import Foundation
#if canImport(FoundationNetworking)
internal import FoundationNetworking
#endif

/// Sending one request: credentials (refreshed once on 401) and redirects (same origin only).
extension HTTPTransport {
    /// The answer to one request, after a 401 was retried with fresh credentials.
    enum Answer {
        case response(Int, [String: String], Data)
        case tooLarge(status: Int?, limit: Int)
        case unreachable(String)
        case unauthorized(String)
        /// A redirect the transport does not follow (another origin, or a method it would change).
        case redirected(String)
    }

    func send(method: String, path: String, query: [URLQueryItem] = [], headers: [String: String], body: Data?) async -> Answer {
        guard var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: false) else {
            return .unreachable("the base URL \(baseURL) is not a valid URL")
        }
        let basePath = components.percentEncodedPath.hasSuffix("/") ? components.percentEncodedPath : components.percentEncodedPath + "/"
        components.percentEncodedPath = basePath + path
        if !query.isEmpty { components.queryItems = query }
        guard let url = components.url else { return .unreachable("cannot make a URL from \(baseURL) and \(path)") }
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.httpBody = body
        for (name, value) in options.headers { request.setValue(value, forHTTPHeaderField: name) }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        var answer = await sendOnce(request, method: method, refreshAuth: false)
        if case .response(401, _, _) = answer {
            guard auth != nil else {
                return .unauthorized("the server answered 401 to \(method) \(path) and the app gave no credentials (HTTPTransport's auth provider)")
            }
            answer = await sendOnce(request, method: method, refreshAuth: true)
            if case .response(401, _, _) = answer {
                return .unauthorized("the server answered 401 to \(method) \(path), also with fresh credentials from the auth provider")
            }
        }
        return answer
    }

    /// Sends the request with the auth provider's credentials (fresh ones after a 401).
    private func sendOnce(_ request: URLRequest, method: String, refreshAuth: Bool) async -> Answer {
        var request = request
        if let auth {
            do {
                if let value = try await auth.authorization(refresh: refreshAuth) {
                    request.setValue(value, forHTTPHeaderField: "Authorization")
                }
            } catch {
                return .unauthorized("the auth provider gave no credentials: \(error)")
            }
        }
        return await load(request, method: method, redirectsLeft: 5)
    }

    /// Loads a request, following only what PROTOCOL.md allows: a 307 or 308 to the same origin
    /// (scheme, host, port), which keeps the method, body and headers. A redirect to another
    /// origin would carry the credentials and the idempotency key there: never followed.
    private func load(_ request: URLRequest, method: String, redirectsLeft: Int) async -> Answer {
        let url = request.url!
        switch await loader.load(request) {
        case .failed(let error):
            return .unreachable("\(method) \(url.absoluteString): \(error.localizedDescription)")
        case .tooLarge(let response):
            return .tooLarge(status: response?.statusCode, limit: options.maxResponseBytes)
        case .response(let response, let data):
            var fields: [String: String] = [:]
            for (name, value) in response.allHeaderFields {
                if let name = name as? String, let value = value as? String { fields[name.lowercased()] = value }
            }
            let status = response.statusCode
            guard HTTPResponseClass(status: status) == .redirect, let location = fields["location"] else {
                return .response(status, fields, data)
            }
            guard let target = URL(string: location, relativeTo: url)?.absoluteURL else {
                return .redirected("\(method) \(url.absoluteString) was redirected (\(status)) to an unreadable Location: not followed")
            }
            guard Self.sameOrigin(url, target) else {
                return .redirected(
                    "\(method) \(url.absoluteString) was redirected (\(status)) to another origin, \(target.absoluteString): "
                        + "not followed (credentials and idempotency keys never leave the server's origin)")
            }
            guard status == 307 || status == 308 else {
                return .redirected(
                    "\(method) \(url.absoluteString) was redirected (\(status)) to \(target.absoluteString): not followed "
                        + "(only 307 and 308 keep the method and body); fix the base URL")
            }
            guard redirectsLeft > 0 else {
                return .redirected("\(method) \(url.absoluteString): too many redirects (the last to \(target.absoluteString))")
            }
            var next = request
            next.url = target
            return await load(next, method: method, redirectsLeft: redirectsLeft - 1)
        }
    }

    static func sameOrigin(_ a: URL, _ b: URL) -> Bool {
        func port(_ url: URL) -> Int? { url.port ?? (url.scheme?.lowercased() == "https" ? 443 : url.scheme?.lowercased() == "http" ? 80 : nil) }
        return a.scheme?.lowercased() == b.scheme?.lowercased() && a.host?.lowercased() == b.host?.lowercased() && port(a) == port(b)
    }
}

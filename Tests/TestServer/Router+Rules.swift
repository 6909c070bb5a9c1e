import Foundation

/// The rules of PROTOCOL.md that do not depend on the stored data: what the server serves, who
/// may ask, and what a push body may be.
extension TestServer {
    /// Whether `collection` is served (``servedCollections``, or every valid name when nil).
    func serves(_ collection: String) -> Bool {
        guard Names.isCollection(collection) else { return false }
        return servedCollections.map { $0.contains(collection) || serverComputedCollections.contains(collection) } ?? true
    }

    /// 404 for a collection the server does not serve: a client stores and deletes nothing.
    static func unserved(_ collection: String) -> HTTPResponse {
        .error(404, "this server does not serve the collection \(JSONText.quoted(collection))")
    }

    /// Whether an `Authorization` header carries `token` under the Bearer scheme, whose name is
    /// compared case-insensitively (RFC 9110 §11.1).
    static func authorizes(_ header: String?, token: String) -> Bool {
        guard let header else { return false }
        let parts = header.trimmingCharacters(in: .whitespaces).split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return false }
        return parts[1].trimmingCharacters(in: .whitespaces) == token
    }

    /// What is wrong with a push's body, or `nil`: a `PUT` carries a JSON object whose `"id"`, if
    /// any, is the URL's; no JSON body (a custom command's included) repeats a member name.
    static func bodyProblem(_ request: Request, entityID: String?) -> String? {
        if request.method == "DELETE" || (request.method == "POST" && request.body.isEmpty) { return nil }
        let bytes = [UInt8](request.body)
        let document: RawJSON
        do {
            document = try RawJSON.parse(bytes)
        } catch {
            return "the body is not JSON: \(error)"
        }
        if let repeated = document.repeatedMember { return "the member \(JSONText.quoted(repeated)) appears twice in one object" }
        guard request.method == "PUT", let entityID else { return nil }
        guard case .object = document.value else { return "a PUT body is a JSON object" }
        if let id = document["id"] {
            guard let text = id.stringValue else { return "the body's \"id\" is not a string" }
            guard text == entityID else {
                return "the body's id \(JSONText.quoted(text)) is not the URL's \(JSONText.quoted(entityID))"
            }
        }
        return nil
    }
}

import Foundation

/// Authorization: required when the server has a token; the scheme name is case-insensitive.
extension ConformanceSuite {
    static let authChecks: [Check] = [
        Check("auth-required", "a request without Authorization, or with a wrong token, is 401") { context in
            guard let token = context.options.token else { throw CheckSkip(reason: "the server requires no token (--token)") }
            let path = context.path(context.collection.name) + "?partition=" + CheckContext.encodeSegment(context.collection.partition)
            try context.expect(try context.client.send("GET", path), [401], "a pull without Authorization")
            try context.expect(try context.send("GET", path, headers: [("Authorization", "Bearer \(token)x")]), [401], "a pull with a wrong token")
            try context.expect(
                try context.send("GET", path, headers: [("Authorization", "Basic \(token)")]), [401], "a pull with the token under another scheme")
        },
        Check("auth-scheme-case", "the scheme name is case-insensitive (bearer, BEARER) for pulls and pushes") { context in
            guard let token = context.options.token else { throw CheckSkip(reason: "the server requires no token (--token)") }
            let collection = context.collection
            let path = context.path(collection.name) + "?partition=" + CheckContext.encodeSegment(collection.partition)
            for scheme in ["bearer", "BEARER", "bEaReR"] {
                try context.expect(
                    try context.send("GET", path, headers: [("Authorization", "\(scheme) \(token)")]), [200], "a pull with \"\(scheme) <token>\"")
            }
            let id = context.newID()
            let answer = try context.put(
                collection, id, body: context.entity(collection, id: id, note: "lowercase").data, .create,
                extraHeaders: [("Authorization", "bearer \(token)")])
            try context.expect(answer, [201], "a create with \"bearer <token>\"")
        },
    ]
}

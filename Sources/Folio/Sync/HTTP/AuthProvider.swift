/// Gives the `Authorization` header for the server's requests.
///
/// ```swift
/// struct TokenAuth: AuthProvider {
///     let session: UserSession
///     func authorization(refresh: Bool) async throws -> String? {
///         "Bearer " + (refresh ? try await session.refreshToken() : session.token)
///     }
/// }
/// ```
public protocol AuthProvider: Sendable {
    /// The header's value, e.g. `"Bearer abc"`, or nil to send none.
    /// - Parameter refresh: True after the server answered 401 to the current credentials: get
    ///   fresh ones.
    /// - Returns: The value of the `Authorization` header.
    /// - Throws: If no credentials can be had; the request then waits and is tried again later.
    func authorization(refresh: Bool) async throws -> String?
}

/// A fixed `Authorization` header (for tools and tests).
public struct StaticAuthorization: AuthProvider {
    let value: String

    /// - Parameter value: The header's value, e.g. `"Bearer abc"`.
    public init(_ value: String) { self.value = value }

    /// The fixed value, whether or not a refresh is asked for.
    /// - Parameter refresh: Ignored: a fixed header has nothing fresher to give.
    /// - Returns: The value given to ``init(_:)``.
    public func authorization(refresh: Bool) async throws -> String? { value }
}

@testable import Folio
import Testing

/// Expects `body` to throw a ``FolioError`` with `code`, and returns it for further checks.
@discardableResult
func expectFolioError<R>(
    _ code: FolioError.Code, sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () async throws -> R
) async -> FolioError? {
    do {
        _ = try await body()
        Issue.record("expected FolioError \(code), but nothing was thrown", sourceLocation: sourceLocation)
    } catch let error as FolioError {
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
        return error
    } catch {
        Issue.record("expected FolioError \(code), got \(error)", sourceLocation: sourceLocation)
    }
    return nil
}

import Foundation
import HTTPTypes
import Hummingbird

/// The bridge from Hummingbird to the protocol: collects the body (bounded), hands the request
/// to the ``APIRouter`` and writes its answer as JSON.
struct HTTPAdapter: HTTPResponder {
    typealias Context = BasicRequestContext

    let router: APIRouter
    /// The largest request body accepted (a batch may be this large).
    let maxBodyBytes: Int

    func respond(to request: Request, context: Context) async throws -> Response {
        var request = request
        let answer: APIResponse
        do {
            let buffer = try await request.collectBody(upTo: maxBodyBytes)
            var headers: [String: String] = [:]
            for field in request.headers {
                let name = field.name.canonicalName
                headers[name] = headers[name].map { $0 + ", " + field.value } ?? field.value
            }
            answer = await router.respond(method: request.method.rawValue, target: request.uri.string,
                                          headers: headers, body: Data(buffer.readableBytesView))
        } catch {
            answer = .error(413, "a request body is at most \(maxBodyBytes) bytes", field: "body")
        }
        return Self.response(answer)
    }

    /// The answer as an HTTP response: its JSON body, `Content-Type`, and its headers.
    static func response(_ answer: APIResponse) -> Response {
        var fields = HTTPFields()
        var body = Data()
        do {
            body = try answer.bodyData()
        } catch {
            let failure = APIResponse.error(500, "the answer could not be encoded: \(error)")
            return response(failure)
        }
        if answer.body != nil { fields[.contentType] = "application/json" }
        for (name, value) in answer.headers.sorted(by: { $0.key < $1.key }) {
            if let name = HTTPField.Name(name) { fields[name] = value }
        }
        let status = HTTPResponse.Status(code: answer.status)
        return Response(status: status, headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
    }
}

import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// The bridge from Hummingbird to the protocol: collects the body (bounded), hands the request
/// to the ``APIRouter`` and writes its answer as JSON.
struct HTTPAdapter: HTTPResponder {
    typealias Context = SyncRequestContext

    let router: APIRouter
    /// The largest request body accepted (a batch may be this large).
    let maxBodyBytes: Int

    func respond(to request: Request, context: Context) async throws -> Response {
        var request = request
        if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > maxBodyBytes {
            let answer = APIResponse.error(413, "a request body is at most \(maxBodyBytes) bytes; this one announces \(length)", field: "body")
            return Self.refuseAndClose(answer, channel: context.channel)
        }
        let answer: APIResponse
        do {
            let buffer = try await request.collectBody(upTo: maxBodyBytes)
            var headers: [String: String] = [:]
            for field in request.headers {
                let name = field.name.canonicalName
                headers[name] = headers[name].map { $0 + ", " + field.value } ?? field.value
            }
            answer = await router.respond(
                method: request.method.rawValue, target: request.uri.string,
                headers: headers, body: Data(buffer.readableBytesView))
        } catch {
            // A chunked body past the limit: the rest is not read either.
            return Self.refuseAndClose(.error(413, "a request body is at most \(maxBodyBytes) bytes", field: "body"), channel: context.channel)
        }
        return Self.response(answer)
    }

    /// A 413 for a body over the limit, sent before the rest of the body is read, then the
    /// connection closed. Hummingbird would otherwise read (and drop) the whole body before the next
    /// request, holding the connection for 100 MB that nobody may send.
    private static func refuseAndClose(_ answer: APIResponse, channel: any Channel) -> Response {
        var bytes = Data()
        do { bytes = try answer.bodyData() } catch { bytes = Data("{}".utf8) }
        let body = bytes
        var fields = HTTPFields()
        fields[.contentType] = "application/json"
        fields[.contentLength] = String(body.count)
        fields[.connection] = "close"
        return Response(
            status: .contentTooLarge, headers: fields,
            body: ResponseBody { writer in
                try await writer.write(ByteBuffer(bytes: body))
                try await writer.finish(nil)
                // The event loop runs this after the answer's writes, which are already queued on it.
                channel.eventLoop.execute { channel.close(promise: nil) }
            })
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

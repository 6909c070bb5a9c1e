import Foundation

/// One HTTP/1.1 request as read from the wire, before any routing.
struct HTTPRequestMessage: Sendable {
    var method: String
    /// The request target as sent: `/api/todos/a%2Fb?x=1`.
    var target: String
    var version: String
    /// Header names lowercased; repeated headers joined with `", "`.
    var headers: [String: String]
    var body: Data

    /// Whether the connection stays open after the response (HTTP/1.1 unless `Connection: close`;
    /// HTTP/1.0 only with `Connection: keep-alive`).
    var keepAlive: Bool {
        let tokens = (headers["connection"] ?? "").lowercased().split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        if version == "HTTP/1.0" { return tokens.contains("keep-alive") }
        return !tokens.contains("close")
    }
}

/// Why a request could not be read.
enum HTTPParseError: Error, Equatable {
    /// The peer closed the connection (or it failed) in the middle of a request.
    case connectionClosed
    /// The request line and headers exceed ``HTTPLimits/maxHead``: answered with 413.
    case headTooLarge
    /// The body exceeds ``HTTPLimits/maxBody``: answered with 413.
    case bodyTooLarge
    /// Not HTTP/1.x: answered with 400.
    case malformed(String)
}

/// The bounds of what the server reads.
struct HTTPLimits: Sendable {
    var maxHead = 64 * 1024
    var maxBody = 64 * 1024 * 1024
}

/// Reads HTTP/1.x requests from a connected socket, one after the other (keep-alive, pipelining).
///
/// Bodies are read by `Content-Length` or `Transfer-Encoding: chunked`; `Expect: 100-continue`
/// is answered before the body is read. Not thread-safe: one connection thread owns it.
final class HTTPReader {
    private let fd: Int32
    private let limits: HTTPLimits
    private var buffer: [UInt8] = []
    private var start = 0
    private var chunk = [UInt8](repeating: 0, count: 64 * 1024)

    init(fd: Int32, limits: HTTPLimits = HTTPLimits()) {
        self.fd = fd
        self.limits = limits
    }

    private var buffered: Int { buffer.count - start }

    /// The next request, or `nil` when the peer closed the connection between requests.
    /// `sendContinue` is called when the client waits for `100 Continue` before sending its body.
    func readRequest(sendContinue: () -> Void) throws(HTTPParseError) -> HTTPRequestMessage? {
        compact()
        guard var message = try readHead() else { return nil }
        let encoding = (message.headers["transfer-encoding"] ?? "").lowercased()
        let expectsContinue = (message.headers["expect"] ?? "").lowercased() == "100-continue"
        if encoding.contains("chunked") {
            if expectsContinue && buffered == 0 { sendContinue() }
            message.body = try readChunkedBody()
        } else if let lengthText = message.headers["content-length"] {
            guard let length = Int(lengthText.trimmingCharacters(in: .whitespaces)), length >= 0 else {
                throw .malformed("bad Content-Length \(lengthText)")
            }
            guard length <= limits.maxBody else { throw .bodyTooLarge }
            if expectsContinue && length > 0 && buffered == 0 { sendContinue() }
            message.body = Data(try readExactly(length))
        } else if encoding.isEmpty == false && encoding != "identity" {
            throw .malformed("unsupported Transfer-Encoding \(encoding)")
        }
        return message
    }

    // MARK: Head

    private func readHead() throws(HTTPParseError) -> HTTPRequestMessage? {
        // Tolerate empty lines before a request line (RFC 9112 §2.2).
        var scanned = 0
        while true {
            while buffered >= 2, buffer[start] == 13, buffer[start + 1] == 10 { start += 2 }
            if let end = findHeadEnd(from: scanned) {
                let head = Array(buffer[start..<end])
                start = end + 4
                return try parseHead(head)
            }
            scanned = max(0, buffered - 3)
            guard buffered <= limits.maxHead else { throw .headTooLarge }
            if try fill() == 0 {
                if buffered == 0 { return nil }
                throw .connectionClosed
            }
        }
    }

    /// The index of the `\r\n\r\n` ending the head, searching from `offset` bytes after `start`.
    private func findHeadEnd(from offset: Int) -> Int? {
        var index = start + offset
        while index + 3 < buffer.count {
            if buffer[index] == 13, buffer[index + 1] == 10, buffer[index + 2] == 13, buffer[index + 3] == 10 { return index }
            index += 1
        }
        return nil
    }

    private func parseHead(_ head: [UInt8]) throws(HTTPParseError) -> HTTPRequestMessage {
        guard head.count <= limits.maxHead else { throw .headTooLarge }
        let text = String(decoding: head, as: UTF8.self)
        var lines = text.components(separatedBy: "\r\n")
        let requestLine = lines.removeFirst().split(separator: " ", omittingEmptySubsequences: true)
        guard requestLine.count == 3, requestLine[2].hasPrefix("HTTP/1.") else {
            throw .malformed("bad request line")
        }
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { throw .malformed("bad header line") }
            let name = line[..<colon].lowercased()
            guard !name.isEmpty, !name.contains(" ") else { throw .malformed("bad header name") }
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            if let previous = headers[name] {
                headers[name] = previous + ", " + value
            } else {
                headers[name] = value
            }
        }
        return HTTPRequestMessage(
            method: String(requestLine[0]), target: String(requestLine[1]), version: String(requestLine[2]),
            headers: headers, body: Data())
    }

    // MARK: Body

    private func readChunkedBody() throws(HTTPParseError) -> Data {
        var body = Data()
        while true {
            let line = try readLine()
            let sizeText = line.split(separator: ";", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
            guard let size = Int(sizeText, radix: 16), size >= 0 else { throw .malformed("bad chunk size") }
            if size == 0 {
                while try !readLine().isEmpty {}   // trailers
                return body
            }
            guard body.count + size <= limits.maxBody else { throw .bodyTooLarge }
            body.append(contentsOf: try readExactly(size))
            guard try readLine().isEmpty else { throw .malformed("chunk not followed by CRLF") }
        }
    }

    /// One CRLF-terminated line (at most 8 KiB), without the CRLF.
    private func readLine() throws(HTTPParseError) -> String {
        var scanned = start
        while true {
            var index = scanned
            while index + 1 < buffer.count {
                if buffer[index] == 13, buffer[index + 1] == 10 {
                    let line = String(decoding: buffer[start..<index], as: UTF8.self)
                    start = index + 2
                    return line
                }
                index += 1
            }
            scanned = max(start, buffer.count - 1)
            guard buffered <= 8 * 1024 else { throw .malformed("line too long") }
            if try fill() == 0 { throw .connectionClosed }
        }
    }

    private func readExactly(_ count: Int) throws(HTTPParseError) -> [UInt8] {
        if buffered >= count {
            defer { start += count }
            return Array(buffer[start..<start + count])
        }
        var result = [UInt8](repeating: 0, count: count)
        var filled = buffered
        result.replaceSubrange(0..<filled, with: buffer[start..<buffer.count])
        start = buffer.count
        while filled < count {
            let read: Int
            do {
                read = try result.withUnsafeMutableBytes { raw in
                    try Socket.receive(fd, into: raw.baseAddress! + filled, count: count - filled)
                }
            } catch {
                throw .connectionClosed
            }
            if read == 0 { throw .connectionClosed }
            filled += read
        }
        return result
    }

    /// Reads whatever the socket has (blocking for at least one byte) into the buffer. 0 at the end.
    private func fill() throws(HTTPParseError) -> Int {
        let read: Int
        do {
            read = try chunk.withUnsafeMutableBytes { raw in try Socket.receive(fd, into: raw.baseAddress!, count: raw.count) }
        } catch {
            throw .connectionClosed
        }
        buffer.append(contentsOf: chunk[0..<read])
        return read
    }

    private func compact() {
        if start > 0 {
            buffer.removeFirst(start)
            start = 0
        }
    }
}

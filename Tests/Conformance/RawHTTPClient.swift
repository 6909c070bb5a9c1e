import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An HTTP answer as read from the wire.
struct RawResponse: Sendable {
    var status: Int
    /// Header names lowercased; repeated headers joined with `", "`.
    var headers: [String: String]
    var body: Data

    func header(_ name: String) -> String? { headers[name.lowercased()] }

    /// The body parsed as JSON, or nil when it is empty or not JSON.
    var json: JSON? { body.isEmpty ? nil : try? JSON.parse(body) }

    /// `201 ETag "3" {"id":…}` with the body cut at 300 bytes, for failure messages.
    var summary: String {
        var text = "\(status)"
        if let etag = header("ETag") { text += " ETag \(etag)" }
        let excerpt = String(decoding: body.prefix(300), as: UTF8.self)
        if !excerpt.isEmpty { text += " " + excerpt + (body.count > 300 ? "…" : "") }
        return text
    }
}

/// Why a raw exchange failed.
struct RawHTTPError: Error, CustomStringConvertible {
    var description: String
}

/// Sends hand-written HTTP/1.1 requests over a POSIX TCP socket, so the suite can send what a
/// client library would not: duplicate members, a `Content-Length` with no body, any scheme.
///
/// Every call opens its own connection (`Connection: close`) and is bounded by `timeout`.
struct RawHTTPClient: Sendable {
    var host: String
    var port: UInt16
    /// The base URL's path, `/api/`, always ending with `/`.
    var basePath: String
    /// Seconds any one exchange may take.
    var timeout: Double = 10

    /// A complete request: `PUT /api/todos/X HTTP/1.1`, the headers, and the body.
    func send(_ method: String, _ relativePath: String, headers: [(String, String)] = [], body: Data? = nil) throws -> RawResponse {
        var head = "\(method) \(basePath)\(relativePath) HTTP/1.1\r\nHost: \(host):\(port)\r\nConnection: close\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if let body {
            head += "Content-Type: application/json\r\nContent-Length: \(body.count)\r\n"
        } else if method == "PUT" || method == "POST" {
            head += "Content-Length: 0\r\n"
        }
        var bytes = Data((head + "\r\n").utf8)
        if let body { bytes.append(body) }
        let connection = try RawConnection(host: host, port: port, timeout: timeout)
        defer { connection.close() }
        try connection.write(bytes)
        return try connection.readResponse()
    }

    /// Opens a connection for an exchange the caller drives byte by byte.
    func connect() throws -> RawConnection { try RawConnection(host: host, port: port, timeout: timeout) }
}

/// One TCP connection with read and write deadlines.
final class RawConnection {
    private let fd: Int32
    private var buffer: [UInt8] = []
    private let timeout: Double
    /// No exchange on this connection reads past this instant (twice the timeout), however slowly
    /// the peer trickles bytes.
    private let deadline: Date

    init(host: String, port: UInt16, timeout: Double) throws {
        self.timeout = timeout
        deadline = Date(timeIntervalSinceNow: 2 * timeout)
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
        hints.ai_socktype = SOCK_STREAM
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        let resolved = getaddrinfo(host, String(port), &hints, &list)
        guard resolved == 0, let first = list else { throw RawHTTPError(description: "cannot resolve \(host): \(String(cString: gai_strerror(resolved)))") }
        defer { freeaddrinfo(list) }
        let fd = socket(first.pointee.ai_family, first.pointee.ai_socktype, first.pointee.ai_protocol)
        guard fd >= 0 else { throw RawHTTPError(description: "socket: errno \(errno)") }
        self.fd = fd
        var limit = timeval()
        limit.tv_sec = .init(Int(timeout))
        limit.tv_usec = .init((timeout - Double(Int(timeout))) * 1_000_000)
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        _ = setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        #if canImport(Darwin)
        var one: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
        guard connect(fd, first.pointee.ai_addr, first.pointee.ai_addrlen) == 0 else {
            let code = errno
            _ = closeDescriptor(fd)
            throw RawHTTPError(description: "cannot connect to \(host):\(port): errno \(code)")
        }
    }

    func close() { _ = closeDescriptor(fd) }

    /// Writes every byte, or throws (a peer that closed, a deadline).
    func write(_ data: Data) throws {
        try data.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                #if canImport(Glibc)
                let sent = Glibc.send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
                #else
                let sent = Darwin.send(fd, raw.baseAddress! + offset, raw.count - offset, 0)
                #endif
                if sent < 0 {
                    if errno == EINTR { continue }
                    throw RawHTTPError(description: "send failed: errno \(errno)")
                }
                offset += sent
            }
        }
    }

    /// Reads more bytes into the buffer; 0 at the end of the stream.
    private func fill() throws -> Int {
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            guard Date() < deadline else { throw RawHTTPError(description: "the exchange took over \(2 * timeout) s") }
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, $0.count, 0) }
            if count < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK { throw RawHTTPError(description: "no answer within \(timeout) s") }
                if errno == ECONNRESET { return 0 }
                throw RawHTTPError(description: "recv failed: errno \(errno)")
            }
            buffer.append(contentsOf: chunk[0..<count])
            return count
        }
    }

    /// Whether the peer closes the connection (end of stream or reset) within the deadline, and
    /// how many bytes it sent before that (after what was already read).
    func closesWithinDeadline() -> (closed: Bool, extraBytes: Int) {
        var extra = buffer.count
        buffer.removeAll()
        while true {
            do {
                if try fill() == 0 { return (true, extra) }
                extra += buffer.count
                buffer.removeAll()
            } catch {
                return (false, extra)
            }
        }
    }

    /// Reads one response (by `Content-Length`, chunked, or to the end of the stream).
    func readResponse() throws -> RawResponse {
        var headEnd: Int?
        while headEnd == nil {
            headEnd = findHeadEnd()
            if headEnd == nil, try fill() == 0 { throw RawHTTPError(description: "the connection closed before a complete answer (\(buffer.count) bytes)") }
        }
        let head = String(decoding: buffer[0..<headEnd!], as: UTF8.self)
        buffer.removeFirst(headEnd! + 4)
        var lines = head.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { throw RawHTTPError(description: "bad status line: \(head.prefix(100))") }
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            headers[name] = headers[name].map { $0 + ", " + value } ?? value
        }
        if status == 100 { return try readResponse() }
        var body = Data()
        if (headers["transfer-encoding"] ?? "").lowercased().contains("chunked") {
            while true {
                let line = try readLine()
                guard let size = Int(line.split(separator: ";").first.map(String.init)?.trimmingCharacters(in: .whitespaces) ?? "", radix: 16) else {
                    throw RawHTTPError(description: "bad chunk size \(line)")
                }
                if size == 0 { break }
                body.append(contentsOf: try readExactly(size))
                _ = try readLine()
            }
        } else if let length = headers["content-length"].flatMap({ Int($0) }) {
            body.append(contentsOf: try readExactly(length))
        } else if status != 204, status != 304 {
            while try fill() > 0 {}
            body.append(contentsOf: buffer)
            buffer.removeAll()
        }
        return RawResponse(status: status, headers: headers, body: body)
    }

    private func findHeadEnd() -> Int? {
        guard buffer.count >= 4 else { return nil }
        for index in 0...(buffer.count - 4) where buffer[index] == 13 && buffer[index + 1] == 10 && buffer[index + 2] == 13 && buffer[index + 3] == 10 {
            return index
        }
        return nil
    }

    private func readLine() throws -> String {
        while true {
            if buffer.count >= 2 {
                for index in 0..<(buffer.count - 1) where buffer[index] == 13 && buffer[index + 1] == 10 {
                    let line = String(decoding: buffer[0..<index], as: UTF8.self)
                    buffer.removeFirst(index + 2)
                    return line
                }
            }
            if try fill() == 0 { throw RawHTTPError(description: "the connection closed inside a chunked body") }
        }
    }

    private func readExactly(_ count: Int) throws -> [UInt8] {
        while buffer.count < count {
            if try fill() == 0 { throw RawHTTPError(description: "the connection closed after \(buffer.count) of \(count) body bytes") }
        }
        defer { buffer.removeFirst(count) }
        return Array(buffer[0..<count])
    }
}

/// `close(2)`, named apart from ``RawConnection/close()``.
private func closeDescriptor(_ fd: Int32) -> Int32 {
    #if canImport(Glibc)
    Glibc.close(fd)
    #else
    Darwin.close(fd)
    #endif
}

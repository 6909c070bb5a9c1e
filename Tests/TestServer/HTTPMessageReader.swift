import Foundation

/// Reads whole HTTP/1.1 messages (head and body, framed by `Content-Length` or chunked) from one
/// side of a connection the fault proxy relays, so that it can cut a chosen message at a chosen byte.
final class HTTPMessageReader {
    struct Message {
        /// The message's bytes, exactly as read.
        var bytes: Data
        /// How many of them are the head (up to and including the blank line).
        var headLength: Int
        /// The head's lines, the start line first.
        var lines: [String]
        /// A response's status.
        var status: Int?

        /// The value of a header (the first one with that name, case-insensitive).
        func header(_ name: String) -> String? {
            for line in lines.dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { continue }
                if line[..<colon].trimmingCharacters(in: .whitespaces).lowercased() == name.lowercased() {
                    return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                }
            }
            return nil
        }
    }

    private let fd: Int32
    private let isStopping: @Sendable () -> Bool
    private var buffer = Data()

    init(fd: Int32, isStopping: @escaping @Sendable () -> Bool) {
        self.fd = fd
        self.isStopping = isStopping
    }

    /// The next message, or nil when the peer closed, the proxy stops, `timeout` passes first, or
    /// the bytes are not HTTP/1.1 this reader understands.
    func read(response: Bool, timeout: Duration) -> Message? {
        let deadline = ContinuousClock.now + timeout
        let blankLine = Data("\r\n\r\n".utf8)
        var headEnd: Int?
        while headEnd == nil {
            if let range = buffer.range(of: blankLine) {
                headEnd = range.upperBound - buffer.startIndex
            } else {
                guard buffer.count < 65_536, fill(before: deadline) else { return nil }
            }
        }
        let headLength = headEnd!
        let lines = String(decoding: buffer.prefix(headLength), as: UTF8.self)
            .components(separatedBy: "\r\n").filter { !$0.isEmpty }
        var message = Message(bytes: Data(), headLength: headLength, lines: lines, status: nil)
        if response {
            let parts = (lines.first ?? "").split(separator: " ")
            guard parts.count >= 2, let status = Int(parts[1]) else { return nil }
            message.status = status
        }
        let total: Int
        if response, let status = message.status, status < 200 || status == 204 || status == 304 {
            total = headLength
        } else if message.header("Transfer-Encoding")?.lowercased().contains("chunked") == true {
            guard let end = chunkedEnd(from: headLength, before: deadline) else { return nil }
            total = end
        } else if let length = message.header("Content-Length").flatMap(Int.init), length >= 0 {
            total = headLength + length
        } else if response {
            // No framing: the body runs to the end of the connection.
            while fill(before: deadline) {}
            total = buffer.count
        } else {
            total = headLength
        }
        while buffer.count < total {
            guard fill(before: deadline) else { return nil }
        }
        message.bytes = Data(buffer.prefix(total))
        buffer = Data(buffer.dropFirst(total))
        return message
    }

    /// The offset just past a chunked body that starts at `start`.
    private func chunkedEnd(from start: Int, before deadline: ContinuousClock.Instant) -> Int? {
        var position = start
        let lineEnd = Data("\r\n".utf8)
        func line() -> String? {
            while true {
                let base = buffer.startIndex
                if let range = buffer.range(of: lineEnd, in: (base + position)..<buffer.endIndex) {
                    let text = String(decoding: buffer[(base + position)..<range.lowerBound], as: UTF8.self)
                    position = range.upperBound - base
                    return text
                }
                guard fill(before: deadline) else { return nil }
            }
        }
        while true {
            guard let sizeLine = line(), let size = Int(sizeLine.split(separator: ";").first.map(String.init) ?? "", radix: 16) else { return nil }
            if size == 0 {
                while true {
                    guard let trailer = line() else { return nil }
                    if trailer.isEmpty { return position }
                }
            }
            position += size
            while buffer.count < position + 2 {
                guard fill(before: deadline) else { return nil }
            }
            position += 2
        }
    }

    /// Reads more bytes into the buffer; false at the end of the stream, on an error, on stop, or
    /// at the deadline.
    private func fill(before deadline: ContinuousClock.Instant) -> Bool {
        while ContinuousClock.now < deadline {
            if isStopping() { return false }
            guard ProxySocket.waitReadable(fd, milliseconds: 50) else { continue }
            guard let bytes = ProxySocket.receive(fd) else { return false }
            buffer.append(bytes)
            return true
        }
        return false
    }
}

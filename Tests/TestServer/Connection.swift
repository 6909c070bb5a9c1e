import Foundation

/// What the server does with a request: answer it, or drop the connection without answering.
enum Reply: Sendable {
    case respond(HTTPResponse)
    case drop
}

/// Serves the requests of one connection in order (keep-alive, pipelining), until the peer
/// closes it, the server stops, or a reply drops it. Runs on the connection's own thread; the
/// listener closes the descriptor afterwards.
struct Connection {
    let fd: Int32
    let listener: Listener

    /// Reads requests and writes what `handle` replies; `handle` returning `nil` (the server is
    /// gone) ends the connection.
    func run(_ handle: (HTTPRequestMessage) -> Reply?) {
        let reader = HTTPReader(fd: fd)
        while !listener.isStopping {
            let message: HTTPRequestMessage
            do {
                guard
                    let next = try reader.readRequest(sendContinue: {
                        Socket.sendAll(fd, Data("HTTP/1.1 100 Continue\r\n\r\n".utf8))
                    })
                else { return }
                message = next
            } catch {
                switch error {
                case .headTooLarge:
                    Socket.sendAll(fd, HTTPResponse.error(413, "request head over 64 KiB").serialized(keepAlive: false))
                case .bodyTooLarge:
                    Socket.sendAll(fd, HTTPResponse.error(413, "request body over 64 MiB").serialized(keepAlive: false))
                case .malformed(let reason):
                    Socket.sendAll(fd, HTTPResponse.error(400, reason).serialized(keepAlive: false))
                case .connectionClosed:
                    break
                }
                return
            }
            guard let reply = handle(message) else { return }
            switch reply {
            case .drop:
                Socket.sendAll(fd, HTTPResponse.truncated)
                return
            case .respond(let response):
                let keepAlive = message.keepAlive && !listener.isStopping
                var bytes = response.serialized(keepAlive: keepAlive)
                if message.method == "HEAD" { bytes = bytes.prefix(bytes.count - response.body.count) }
                guard Socket.sendAll(fd, bytes), keepAlive else { return }
            }
        }
    }
}

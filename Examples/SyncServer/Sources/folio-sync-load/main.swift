import Foundation
#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

// folio-sync-load: PUTs new todos to running servers over kept-alive HTTP/1.1 connections on
// 127.0.0.1 for a fixed time, and prints PUTs per second and latency percentiles. See `usage`.

let usage = """
    USAGE: folio-sync-load --url <base> [--url <base> …] --tokens <file> [--hot]
                           [--seconds 10] [--connections 16]

    Sends PUT {base}todos/<new id> (If-None-Match: *, a fresh Idempotency-Key) on every
    connection, one request at a time, spreading the connections over the URLs, for the given
    time. Each request speaks for a random owner of the tokens file ("<owner> <token>" lines),
    or with --hot always for the first. Prints one line of JSON:
    {"puts": N, "seconds": S, "putsPerSecond": R, "p50Ms": …, "p99Ms": …, "errors": E}.
    Only 127.0.0.1 URLs are accepted.
    """

struct Options {
    var urls: [URL] = []
    var tokens: [String] = []
    var hot = false
    var seconds = 10.0
    var connections = 16
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("folio-sync-load: \(message)\n\n\(usage)\n".utf8))
    exit(2)
}

var options = Options()
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--url":
        guard let text = arguments.popFirst(), let url = URL(string: text), url.host == "127.0.0.1", url.port != nil else {
            fail("--url takes http://127.0.0.1:PORT/api/")
        }
        options.urls.append(url)
    case "--tokens":
        guard let path = arguments.popFirst(), let text = try? String(contentsOfFile: path, encoding: .utf8) else { fail("--tokens takes a readable file") }
        options.tokens = text.split(separator: "\n").compactMap { line in
            let parts = line.split(separator: " ", omittingEmptySubsequences: true)
            return parts.count == 2 && !line.hasPrefix("#") ? String(parts[1]) : nil
        }
    case "--hot": options.hot = true
    case "--seconds":
        guard let seconds = arguments.popFirst().flatMap(Double.init) else { fail("--seconds takes a number") }
        options.seconds = seconds
    case "--connections":
        guard let count = arguments.popFirst().flatMap(Int.init) else { fail("--connections takes a number") }
        options.connections = count
    case "-h", "--help":
        print(usage)
        exit(0)
    default: fail("unknown option \(argument)")
    }
}
guard !options.urls.isEmpty, !options.tokens.isEmpty, options.seconds > 0, options.seconds <= 600, (1...512).contains(options.connections) else {
    fail("give at least one --url, a --tokens file with a token, --seconds up to 600 and 1-512 --connections")
}

/// One kept-alive connection that sends a request and reads its answer (Content-Length framed).
final class Connection {
    let fd: Int32
    private var buffer: [UInt8] = []

    init?(port: UInt16) {
        #if canImport(Glibc)
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        if connected != 0 {
            close(fd)
            return nil
        }
    }

    deinit { close(fd) }

    /// Sends the bytes and returns the answer's status, or nil if the connection broke.
    func exchange(_ request: [UInt8]) -> Int? {
        var sent = 0
        while sent < request.count {
            let count = request[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { return nil }
            sent += count
        }
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while true {
            if let end = headEnd() {
                let head = String(decoding: buffer[..<end], as: UTF8.self)
                let status = Int(head.split(separator: " ").dropFirst().first ?? "") ?? 0
                var length = 0
                for line in head.split(separator: "\r\n") where line.lowercased().hasPrefix("content-length:") {
                    length = Int(line.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) ?? 0
                }
                while buffer.count < end + 4 + length {
                    let count = recv(fd, &chunk, chunk.count, 0)
                    if count <= 0 { return nil }
                    buffer += chunk[0..<count]
                }
                buffer.removeFirst(end + 4 + length)
                return status
            }
            let count = recv(fd, &chunk, chunk.count, 0)
            if count <= 0 { return nil }
            buffer += chunk[0..<count]
        }
    }

    private func headEnd() -> Int? {
        guard buffer.count >= 4 else { return nil }
        for index in 0...(buffer.count - 4) where buffer[index] == 13 && buffer[index + 1] == 10 && buffer[index + 2] == 13 && buffer[index + 3] == 10 {
            return index
        }
        return nil
    }
}

/// What every worker measured.
final class Results: @unchecked Sendable {
    private let lock = NSLock()
    private var latencies: [Double] = []
    private var errors = 0

    func add(_ worker: [Double], errors workerErrors: Int) {
        lock.withLock {
            latencies += worker
            errors += workerErrors
        }
    }

    var snapshot: ([Double], Int) { lock.withLock { (latencies, errors) } }
}

let results = Results()
let start = Date()
let end = start.addingTimeInterval(options.seconds)
let group = DispatchGroup()
for index in 0..<options.connections {
    let url = options.urls[index % options.urls.count]
    let tokens = options.tokens
    let hot = options.hot
    group.enter()
    Thread.detachNewThread {
        defer { group.leave() }
        var latencies: [Double] = []
        var errors = 0
        var connection = Connection(port: UInt16(url.port ?? 0))
        let path = url.path.hasSuffix("/") ? url.path : url.path + "/"
        while Date() < end {
            guard let open = connection else {
                errors += 1
                Thread.sleep(forTimeInterval: 0.01)
                connection = Connection(port: UInt16(url.port ?? 0))
                continue
            }
            let id = UUID().uuidString
            let token = hot ? tokens[0] : tokens[Int.random(in: 0..<tokens.count)]
            let body =
                #"{"id":"\#(id)","title":"Load","date":"2026-11-2\#(Int.random(in: 0...6))","done":false,"priority":1,"#
                + #""createdAt":"2026-11-22T09:00:00.000Z","updatedAt":"2026-11-22T09:00:00.000Z"}"#
            let request =
                "PUT \(path)todos/\(id) HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\n"
                + "Idempotency-Key: \(UUID().uuidString)-00000000000000000001\r\nIf-None-Match: *\r\n"
                + "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
            let sent = Date()
            let status = open.exchange(Array(request.utf8))
            if status == 201 {
                latencies.append(Date().timeIntervalSince(sent) * 1000)
            } else {
                errors += 1
                if status == nil { connection = Connection(port: UInt16(url.port ?? 0)) }
            }
        }
        results.add(latencies, errors: errors)
    }
}
group.wait()
let elapsed = Date().timeIntervalSince(start)
let (latencies, errors) = results.snapshot
let sorted = latencies.sorted()
func percentile(_ p: Double) -> Double { sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))] }
let line: [String: Any] = [
    "puts": sorted.count, "seconds": (elapsed * 100).rounded() / 100, "putsPerSecond": (Double(sorted.count) / elapsed).rounded(),
    "p50Ms": (percentile(0.5) * 100).rounded() / 100, "p99Ms": (percentile(0.99) * 100).rounded() / 100, "errors": errors,
]
let data = (try? JSONSerialization.data(withJSONObject: line, options: [.sortedKeys])) ?? Data()
print(String(decoding: data, as: UTF8.self))
exit(errors > 0 && sorted.isEmpty ? 1 : 0)

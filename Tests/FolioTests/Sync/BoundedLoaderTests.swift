@testable import Folio
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// The loader hands an answer over as soon as its declared length has arrived, without waiting
/// for the task's completion: whatever the answer's shape (its body in one piece or several, of
/// no declared length, compressed, cut short, too large), what the caller gets is the whole body
/// the server meant, or a failure, never a part of it.
@Suite struct BoundedLoaderTests {
    /// Each path's answer, as the script below sends it, and what the caller must get.
    enum Expected: Equatable {
        case body(Data)
        case failed
        case tooLarge
    }

    static let body = Data((0..<3000).map { UInt8(ascii: "a") + UInt8($0 % 26) })
    static let limit = 2500

    static let cases: [(path: String, expected: Expected)] = [
        ("exact", .body(Data(body.prefix(2000)))),
        ("split", .body(Data(body.prefix(2000)))),
        ("chunked", .body(Data(body.prefix(2000)))),
        ("gzip", .body(Data(body.prefix(2000)))),
        ("empty", .body(Data())),
        ("short", .failed),
        ("large", .tooLarge),
        ("undeclared-large", .tooLarge),
    ]

    /// Noise both sides can make: a linear congruential generator's high bytes.
    static func noise(_ count: Int) -> Data {
        var x: UInt32 = 1
        return Data(
            (0..<count).map { _ in
                x = (x &* 1_103_515_245 &+ 12_345) & 0x7FFF_FFFF
                return UInt8((x >> 16) & 0xFF)
            })
    }

    /// A compressed answer whose declared length (of the compressed bytes, 16 KiB) is the size of
    /// the first piece of decoded bytes URLSession hands over: only the `Content-Encoding` tells
    /// that the body is not whole yet.
    @Test func aCompressedAnswerIsNotCutAtItsDeclaredLength() async throws {
        let server = try ScriptedAnswers()
        let loader = BoundedLoader(configuration: .ephemeral, limit: 1 << 20)
        defer { loader.invalidate() }
        for round in 0..<3 {
            guard case .response(let response, let data) = await loader.load(URLRequest(url: server.url("gzip-edge"))) else {
                Issue.record("round \(round): no answer")
                continue
            }
            let noise = try #require(response.value(forHTTPHeaderField: "Noise-Length").flatMap { Int($0) })
            #expect(response.expectedContentLength == 16384)
            let expected = Self.noise(noise) + Data(repeating: UInt8(ascii: "a"), count: 100_000)
            #expect(data == expected, "round \(round): \(data.count) bytes, expected \(expected.count)")
        }
    }

    @Test(arguments: cases.map(\.path))
    func theCallerGetsTheWholeAnswerOrNone(_ path: String) async throws {
        let server = try ScriptedAnswers()
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 30
        let loader = BoundedLoader(configuration: configuration, limit: Self.limit)
        defer { loader.invalidate() }
        let expected = try #require(Self.cases.first { $0.path == path }?.expected)
        // Several times over one session: a connection reused after an answer handed over early
        // must serve the next request as well.
        for round in 0..<3 {
            let result = await loader.load(URLRequest(url: server.url(path)))
            switch (result, expected) {
            case (.response(let response, let data), .body(let body)):
                #expect(response.statusCode == 200, "\(path), round \(round)")
                #expect(data == body, "\(path), round \(round): \(data.count) bytes, expected \(body.count)")
            case (.failed, .failed), (.tooLarge, .tooLarge):
                break
            default:
                Issue.record("\(path), round \(round): \(result), expected \(expected)")
            }
        }
    }
}

/// A python3 server on 127.0.0.1 answering each path in one shape (BoundedLoaderTests.cases).
private final class ScriptedAnswers: @unchecked Sendable {
    let process = Process()
    private(set) var port = 0

    init(sourceLocation: SourceLocation = #_sourceLocation) throws {
        let line = try ScriptedHTTPServer.startPython(process, ["-c", Self.script])
        port = Int(line.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        try #require(port > 0, "the scripted server did not start", sourceLocation: sourceLocation)
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    func url(_ path: String) -> URL {
        URL(string: "http://127.0.0.1:\(port)/\(path)") ?? URL(fileURLWithPath: "/")
    }

    static let script = #"""
        import gzip, http.server, os, threading, time
        body = bytes(ord("a") + i % 26 for i in range(3000))
        def noise(n):
            x, out = 1, bytearray()
            for _ in range(n):
                x = (x * 1103515245 + 12345) % 2**31; out.append((x >> 16) & 0xFF)
            return bytes(out)
        # Noise then a run of letters, compressed to exactly 16 KiB: URLSession's first piece of
        # decoded bytes is as long as the declared (compressed) length.
        pool = noise(20000)
        edge = next((k, gzip.compress(pool[:k] + b"a" * 100000, mtime=0)) for k in range(15800, 16100)
                    if len(gzip.compress(pool[:k] + b"a" * 100000, mtime=0)) == 16384)
        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            def do_GET(self):
                path = self.path.strip("/")
                part = body[:2000]
                def head(headers):
                    self.wfile.write(b"HTTP/1.1 200 OK\r\n" + b"".join(b"%s: %s\r\n" % (k.encode(), v.encode()) for k, v in headers) + b"\r\n")
                if path == "exact":
                    head([("Content-Length", str(len(part)))]); self.wfile.write(part)
                elif path == "split":
                    head([("Content-Length", str(len(part)))]); self.wfile.write(part[:700]); self.wfile.flush()
                    time.sleep(0.05); self.wfile.write(part[700:1500]); self.wfile.flush(); time.sleep(0.05); self.wfile.write(part[1500:])
                elif path == "chunked":
                    head([("Transfer-Encoding", "chunked")])
                    for piece in (part[:900], part[900:]):
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece)); self.wfile.flush(); time.sleep(0.02)
                    self.wfile.write(b"0\r\n\r\n")
                elif path == "gzip":
                    packed = gzip.compress(part)
                    head([("Content-Length", str(len(packed))), ("Content-Encoding", "gzip")]); self.wfile.write(packed)
                elif path == "gzip-edge":
                    head([("Content-Length", str(len(edge[1]))), ("Content-Encoding", "gzip"), ("Noise-Length", str(edge[0]))])
                    self.wfile.write(edge[1])
                elif path == "empty":
                    head([("Content-Length", "0")])
                elif path == "short":
                    head([("Content-Length", str(len(part)))]); self.wfile.write(part[:1200]); self.wfile.flush()
                    self.close_connection = True; return
                elif path == "large":
                    head([("Content-Length", str(len(body)))]); self.wfile.write(body)
                elif path == "undeclared-large":
                    head([("Connection", "close")]); self.wfile.write(body); self.wfile.flush()
                    self.close_connection = True; return
                self.wfile.flush()
            def log_message(self, *args): pass
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        print(server.server_address[1], flush=True)
        # Serve until the test is gone (at most 15 minutes).
        parent = os.getppid()
        for _ in range(1800):
            if os.getppid() != parent: break
            time.sleep(0.5)
        """#
}

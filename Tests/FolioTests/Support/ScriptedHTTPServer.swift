import Foundation
import Testing

/// Two HTTP origins on 127.0.0.1 (two ports) served by a small python3 script, for what the
/// test server does not do: redirects, and answers chosen per path. Every request that reaches
/// `/api/` is logged with its headers, so a test can see what left the client and where.
///
/// - `/cross/<rest>` answers 307 to the other origin's `/api/<rest>`;
/// - `/same/<rest>` answers 308 to `/api/<rest>` on the same origin; `/moved/<rest>` answers 301;
/// - `/api/<rest>` answers 200 with `ETag: "1"` and the request body as the entity.
final class ScriptedHTTPServer: @unchecked Sendable {
    let process = Process()
    let folder = TemporaryFolder()
    private(set) var ports: [Int] = []

    init(sourceLocation: SourceLocation = #_sourceLocation) throws {
        try FileManager.default.createDirectory(at: folder.url, withIntermediateDirectories: true)
        let script = folder.url.appendingPathComponent("server.py")
        try Self.script.write(to: script, atomically: true, encoding: .utf8)
        // The script prints its two ports once both listen.
        let line = try Self.startPython(process, [script.path, folder.url.appendingPathComponent("log").path])
        ports = line.split(whereSeparator: { $0 == " " || $0 == "\n" }).compactMap { Int($0) }
        try #require(ports.count == 2, "the scripted server did not start: \(line)", sourceLocation: sourceLocation)
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// Runs `python3` with `arguments` in `process` and returns the first line it prints (the
    /// ports it listens on), or what it printed before it ended.
    static func startPython(_ process: Process, _ arguments: [String]) throws -> String {
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3"] + arguments
        process.standardOutput = output
        try process.run()
        var bytes = Data()
        for _ in 0..<100 where !bytes.contains(0x0A) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            bytes.append(chunk)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    func url(_ origin: Int, _ path: String) -> URL { URL(string: "http://127.0.0.1:\(ports[origin])/\(path)")! }

    /// The requests that reached `/api/` on either origin: `port method path` and the headers.
    func log() throws -> [[String: String]] {
        guard let data = FileManager.default.contents(atPath: folder.url.appendingPathComponent("log").path) else { return [] }
        return String(decoding: data, as: UTF8.self).split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: String]
        }
    }

    static let script = #"""
        import http.server, json, sys, threading
        log = open(sys.argv[1], "a")
        servers = []
        cuts = {}
        class Handler(http.server.BaseHTTPRequestHandler):
            def answer(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                port = self.server.server_address[1]
                other = [s.server_address[1] for s in servers if s.server_address[1] != port][0]
                path = self.path
                if path.startswith("/cross/"):
                    self.send_response(307); self.send_header("Location", "http://127.0.0.1:%d/api/%s" % (other, path[7:]))
                elif path.startswith("/same/"):
                    self.send_response(308); self.send_header("Location", "/api/" + path[6:])
                elif path.startswith("/cut/") and cuts.get(path, 0) < 2:
                    # A complete status line, then an orderly close inside the headers.
                    cuts[path] = cuts.get(path, 0) + 1
                    self.wfile.write(b"HTTP/1.1 200 OK\r\n"); self.wfile.flush(); self.close_connection = True
                    return
                elif path.startswith("/reset/"):
                    # The same cut as a reset: an ordinary network error.
                    import os, socket, struct
                    self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: appl"); self.wfile.flush()
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    os.close(self.connection.detach())   # no FIN first: the server's own shutdown would send one
                    self.close_connection = True
                    return
                elif path.startswith("/moved/"):
                    self.send_response(301); self.send_header("Location", "/api/" + path[7:])
                if not path.startswith(("/cross/", "/same/", "/moved/", "/reset/")):
                    entry = {k.lower(): v for k, v in self.headers.items()}
                    entry.update({"port": str(port), "method": self.command, "path": path, "body": body.decode()})
                    log.write(json.dumps(entry) + "\n"); log.flush()
                    self.send_response(200); self.send_header("ETag", '"1"')
                    self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body)
                    return
                self.send_header("Content-Length", "0"); self.end_headers()
            do_GET = do_PUT = do_DELETE = do_POST = answer
            def log_message(self, *args): pass
        for _ in range(2):
            servers.append(http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler))
        for s in servers:
            threading.Thread(target=s.serve_forever, daemon=True).start()
        print(" ".join(str(s.server_address[1]) for s in servers), flush=True)
        # Serve until the test is gone (its deinit kills the server first), at most 15 minutes: a
        # fixed two minutes ran out while a test on a loaded machine waited for its turn.
        import os, time
        parent = os.getppid()
        for _ in range(1800):
            if os.getppid() != parent: break
            time.sleep(0.5)
        """#
}

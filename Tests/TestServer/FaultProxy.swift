import FolioCrashSupport
public import Foundation

/// A TCP proxy on 127.0.0.1 in front of an HTTP server that injects network faults into the
/// requests it relays, chosen by a generator seeded from the test's seed:
///
/// - `resetMidRequest`: part of the request reaches the server, then both sides are reset;
/// - `lostAnswer`: the whole request reaches the server (which applies it), its answer is read and
///   thrown away, and the client's connection is reset or closed;
/// - `resetMidResponse`: part of the answer reaches the client, then a reset;
/// - `truncatedResponse`: part of the answer reaches the client, then an orderly close (inside the
///   head, this is the cut that can make FoundationNetworking trap, swift-corelibs-foundation #5285);
/// - `stall`: the request waits (a bounded time, sometimes past the client's timeout) before it is
///   relayed.
///
/// It understands just enough HTTP/1.1 to find where each message ends, so a fault can hit any
/// request of a kept-alive connection, not only the first. ``waitUntilIdle(timeout:)`` waits for
/// every relayed request to be finished with, so that a stalled request of one client cannot reach
/// the server during the next client's turn.
///
/// Thread safety: `lock` guards every mutable member; each connection runs on a thread of its own.
public final class FaultProxy: @unchecked Sendable {
    public enum Fault: String, CaseIterable, Sendable {
        case resetMidRequest, lostAnswer, resetMidResponse, truncatedResponse, stall
    }

    public let port: UInt16
    private let upstreamPort: UInt16
    private let listenFD: Int32
    private let lock = NSLock()
    private var random: SplitMix64
    private var probabilityValue: Double
    private var stopping = false
    private var acceptRunning = true
    private var listenerClosed = false
    private var connections: Set<Int32> = []
    private var threads = 0
    private var busy = 0
    private var counts: [Fault: Int] = [:]
    private var cutsInHeadValue = 0

    /// The longest stall; the clients' request timeout should be shorter, so some stalls time out.
    public static let longestStall = 3.0

    /// Listens at once on a port the kernel picks and relays to 127.0.0.1:`upstreamPort`.
    /// - Parameters:
    ///   - probability: How likely each request is to suffer a fault.
    public init(upstreamPort: UInt16, seed: UInt64, probability: Double) throws {
        self.upstreamPort = upstreamPort
        random = SplitMix64(seed: seed)
        probabilityValue = probability
        (listenFD, port) = try ProxySocket.listen()
        let thread = Thread { [self] in acceptLoop() }
        thread.name = "FaultProxy accept :\(port)"
        thread.start()
    }

    deinit { stop() }

    /// `http://127.0.0.1:PORT/api/`, the test server's base through the proxy.
    public var baseURL: URL { URL(string: "http://127.0.0.1:\(port)/api/")! }

    /// How likely each request is to suffer a fault (0 turns faults off).
    public var probability: Double {
        get { lock.withLock { probabilityValue } }
        set { lock.withLock { probabilityValue = newValue } }
    }

    /// How many faults of each kind were injected.
    public var faultCounts: [Fault: Int] { lock.withLock { counts } }

    /// How many faults were injected.
    public var faultCount: Int { lock.withLock { counts.values.reduce(0, +) } }

    /// How many cuts of a response fell inside its head (status line and headers).
    public var cutsInHead: Int { lock.withLock { cutsInHeadValue } }

    private var isStopping: Bool { lock.withLock { stopping } }

    /// Waits until no request is being relayed (stalled, or waiting for its answer); false if
    /// `timeout` passes first.
    public func waitUntilIdle(timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while lock.withLock({ busy > 0 }) {
            if ContinuousClock.now >= deadline { return false }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return true
    }

    /// Stops accepting, shuts every connection down, and waits (at most 3 seconds) for the
    /// threads. Idempotent.
    public func stop() {
        let connections = lock.withLock { () -> Set<Int32> in
            stopping = true
            return self.connections
        }
        for fd in connections { Socket.shutdownBoth(fd) }
        let deadline = Date(timeIntervalSinceNow: 3)
        while lock.withLock({ threads > 0 || acceptRunning }), Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        lock.withLock {
            if !acceptRunning, !listenerClosed {
                listenerClosed = true
                Socket.close(listenFD)
            }
        }
    }

    private func acceptLoop() {
        defer { lock.withLock { acceptRunning = false } }
        while !isStopping {
            guard ProxySocket.waitReadable(listenFD, milliseconds: 50), let client = Socket.accept(listenFD) else { continue }
            let accepted = lock.withLock { () -> Bool in
                guard !stopping else { return false }
                connections.insert(client)
                threads += 1
                return true
            }
            guard accepted else {
                Socket.close(client)
                return
            }
            let thread = Thread { [self] in
                relay(client)
                lock.withLock {
                    connections.remove(client)
                    threads -= 1
                }
            }
            thread.name = "FaultProxy connection :\(port)"
            thread.start()
        }
    }

    /// The fault for the next request, if any, and where it cuts (a fraction of the message) or
    /// how long it stalls.
    private func nextFault() -> (fault: Fault, fraction: Double)? {
        lock.withLock {
            guard Double(random.next() % 1_000_000) / 1_000_000 < probabilityValue else { return nil }
            let fault = Fault.allCases[Int(random.next() % UInt64(Fault.allCases.count))]
            counts[fault, default: 0] += 1
            return (fault, Double(random.next() % 1_000_000) / 1_000_000)
        }
    }

    /// Relays one client connection, request after request, until either side closes or a fault
    /// ends it.
    private func relay(_ client: Int32) {
        var upstream: Int32 = -1
        var clientOpen = true
        defer {
            if clientOpen { Socket.close(client) }
            if upstream >= 0 {
                lock.withLock { _ = connections.remove(upstream) }
                Socket.close(upstream)
            }
        }
        let stopped: @Sendable () -> Bool = { [weak self] in self?.isStopping ?? true }
        let fromClient = HTTPMessageReader(fd: client, isStopping: stopped)
        var fromServer: HTTPMessageReader?
        while !isStopping {
            // A kept-alive connection may idle for long; the child gives up well before this.
            guard var request = fromClient.read(response: false, timeout: .seconds(60)) else { return }
            lock.withLock { busy += 1 }
            defer { lock.withLock { busy -= 1 } }
            if request.header("Expect")?.lowercased() == "100-continue" {
                // Answer the expectation here, and relay the request without it.
                Socket.sendAll(client, Data("HTTP/1.1 100 Continue\r\n\r\n".utf8))
                request = withoutExpect(request)
            }
            if upstream < 0 {
                guard let fd = try? ProxySocket.connect(port: upstreamPort) else { return }
                upstream = fd
                lock.withLock { _ = connections.insert(fd) }
                fromServer = HTTPMessageReader(fd: fd, isStopping: stopped)
            }
            let fault = nextFault()
            switch fault?.fault {
            case .resetMidRequest:
                let cut = max(1, min(request.bytes.count - 1, Int(Double(request.bytes.count) * fault!.fraction)))
                Socket.sendAll(upstream, request.bytes.prefix(cut))
                ProxySocket.reset(client)
                clientOpen = false
                return
            case .stall:
                let until = Date(timeIntervalSinceNow: 0.05 + fault!.fraction * (Self.longestStall - 0.05))
                while Date() < until, !isStopping { Thread.sleep(forTimeInterval: 0.01) }
            default:
                break
            }
            guard Socket.sendAll(upstream, request.bytes),
                let response = fromServer?.read(response: true, timeout: .seconds(30))
            else { return }
            switch fault?.fault {
            case .lostAnswer:
                if fault!.fraction < 0.5 {
                    ProxySocket.reset(client)
                    clientOpen = false
                }
                return
            case .resetMidResponse, .truncatedResponse:
                let cut = max(1, min(response.bytes.count - 1, Int(Double(response.bytes.count) * fault!.fraction)))
                if cut < response.headLength { lock.withLock { cutsInHeadValue += 1 } }
                Socket.sendAll(client, response.bytes.prefix(cut))
                if fault?.fault == .resetMidResponse {
                    ProxySocket.reset(client)
                    clientOpen = false
                }
                return
            default:
                guard Socket.sendAll(client, response.bytes) else { return }
                if response.header("Connection")?.lowercased() == "close" { return }
            }
        }
    }

    private func withoutExpect(_ message: HTTPMessageReader.Message) -> HTTPMessageReader.Message {
        let kept = message.lines.filter { !$0.lowercased().hasPrefix("expect:") }
        var copy = message
        let head = Data((kept.joined(separator: "\r\n") + "\r\n\r\n").utf8)
        copy.bytes = head + message.bytes.dropFirst(message.headLength)
        copy.headLength = head.count
        copy.lines = kept
        return copy
    }
}

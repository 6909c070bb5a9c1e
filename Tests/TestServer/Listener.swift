import Foundation

/// Accepts connections on 127.0.0.1 on a thread of its own and serves each connection on a
/// thread of its own, until ``stop(timeout:)``.
///
/// Thread safety: `condition` guards every mutable member. A connection's descriptor is closed
/// only under it, so ``stop(timeout:)`` never shuts down a descriptor number that was reused.
final class Listener: @unchecked Sendable {
    /// The port the kernel picked.
    let port: UInt16

    private let listenFD: Int32
    private let wakePipe: (read: Int32, write: Int32)
    private let condition = NSCondition()
    private var stopping = false
    private var acceptRunning = false
    private var descriptorsClosed = false
    private var openConnections: Set<Int32> = []
    private var connectionThreads = 0

    /// Binds and listens; nothing is accepted before ``start(serving:)``.
    init() throws {
        (listenFD, port) = try Socket.listenOnLoopback()
        do {
            wakePipe = try Socket.makePipe()
        } catch {
            Socket.close(listenFD)
            throw error
        }
    }

    /// Starts the accept thread; `serve` runs on a new thread for every connection, with the
    /// connection's descriptor, and must return when the connection ends (the listener closes it).
    func start(serving serve: @escaping @Sendable (Int32) -> Void) {
        condition.locked { acceptRunning = true }
        let thread = Thread { [self] in acceptLoop(serve) }
        thread.name = "FolioTestServer accept :\(port)"
        thread.start()
    }

    /// Whether ``stop(timeout:)`` was called.
    var isStopping: Bool { condition.locked { stopping } }

    private var threadMarker: String { "FolioTestServer.connection.\(port)" }

    private func acceptLoop(_ serve: @escaping @Sendable (Int32) -> Void) {
        defer {
            condition.locked {
                acceptRunning = false
                condition.broadcast()
            }
        }
        while true {
            let ready = Socket.waitReadable(listenFD, wake: wakePipe.read)
            if ready.woken || isStopping { return }
            guard ready.readable, let fd = Socket.accept(listenFD) else {
                if !ready.readable { Thread.sleep(forTimeInterval: 0.001) }   // poll failed (EINTR): try again
                continue
            }
            let accepted = condition.locked { () -> Bool in
                guard !stopping else { return false }
                openConnections.insert(fd)
                connectionThreads += 1
                return true
            }
            guard accepted else {
                Socket.close(fd)
                return
            }
            let marker = threadMarker
            let thread = Thread { [self] in
                Thread.current.threadDictionary[marker] = NSNumber(value: true)
                serve(fd)
                condition.locked {
                    openConnections.remove(fd)
                    Socket.close(fd)
                    connectionThreads -= 1
                    condition.broadcast()
                }
            }
            thread.name = "FolioTestServer connection :\(port)"
            thread.stackSize = 4 << 20   // room for the nesting the batch parser allows
            thread.start()
        }
    }

    /// Stops accepting, shuts every open connection down and waits (at most `timeout` seconds)
    /// for the accept thread and the connection threads to finish. Idempotent.
    func stop(timeout: TimeInterval = 2) {
        let first = condition.locked { () -> Bool in
            defer { stopping = true }
            return !stopping
        }
        if first { Socket.wake(wakePipe.write) }
        let deadline = Date(timeIntervalSinceNow: timeout)
        // Called from one of our connection threads (a handler dropping the last reference to
        // the server), that thread cannot be waited for.
        let ownThread = Thread.current.threadDictionary[threadMarker] != nil ? 1 : 0
        condition.lock()
        defer { condition.unlock() }
        while acceptRunning, condition.wait(until: deadline) {}
        for fd in openConnections { Socket.shutdownBoth(fd) }
        while connectionThreads > ownThread, condition.wait(until: deadline) {}
        if !acceptRunning, !descriptorsClosed {
            descriptorsClosed = true
            Socket.close(listenFD)
            Socket.close(wakePipe.read)
            Socket.close(wakePipe.write)
        }
    }
}

extension NSCondition {
    /// Runs `body` holding the condition's lock.
    func locked<T>(_ body: () throws -> T) rethrows -> T {
        lock()
        defer { unlock() }
        return try body()
    }
}

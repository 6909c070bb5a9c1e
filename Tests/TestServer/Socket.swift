package import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Thin wrappers over the POSIX calls the server needs, hiding the differences between Glibc and
/// Darwin. Every descriptor they create is close-on-exec, so child processes the tests spawn do
/// not keep the server's sockets open.
package enum Socket {
    /// A failed system call.
    struct Failure: Error, CustomStringConvertible {
        let call: String
        let code: Int32
        var description: String { "\(call) failed: \(String(cString: strerror(code))) (errno \(code))" }
    }

    /// A non-blocking TCP socket listening on 127.0.0.1, on a port the kernel picks.
    static func listenOnLoopback(backlog: Int32 = 128) throws -> (fd: Int32, port: UInt16) {
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw Failure(call: "socket", code: errno) }
        do {
            setCloseOnExec(fd)
            var yes: Int32 = 1
            guard setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size)) == 0 else {
                throw Failure(call: "setsockopt(SO_REUSEADDR)", code: errno)
            }
            var address = sockaddr_in()
            #if canImport(Darwin)
            address.sin_len = UInt8(MemoryLayout<sockaddr_in>.size)
            #endif
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = 0
            address.sin_addr = in_addr(s_addr: UInt32(0x7F00_0001).bigEndian)
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard bound == 0 else { throw Failure(call: "bind", code: errno) }
            guard listen(fd, backlog) == 0 else { throw Failure(call: "listen", code: errno) }
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let named = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
            }
            guard named == 0 else { throw Failure(call: "getsockname", code: errno) }
            try setNonBlocking(fd, true)
            return (fd, UInt16(bigEndian: address.sin_port))
        } catch {
            _ = systemClose(fd)
            throw error
        }
    }

    /// A pipe whose write end wakes a thread blocked in ``waitReadable(_:wake:)``.
    static func makePipe() throws -> (read: Int32, write: Int32) {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw Failure(call: "pipe", code: errno) }
        setCloseOnExec(fds[0])
        setCloseOnExec(fds[1])
        return (fds[0], fds[1])
    }

    /// Blocks until `fd` or `wake` is readable (or in error). Returns whether `wake` fired.
    static func waitReadable(_ fd: Int32, wake: Int32) -> (readable: Bool, woken: Bool) {
        var fds = [
            pollfd(fd: fd, events: Int16(POLLIN), revents: 0),
            pollfd(fd: wake, events: Int16(POLLIN), revents: 0),
        ]
        let result = poll(&fds, nfds_t(fds.count), -1)
        guard result > 0 else { return (false, false) }
        return (fds[0].revents != 0, fds[1].revents != 0)
    }

    /// Writes one byte to a wake pipe.
    static func wake(_ fd: Int32) {
        var byte: UInt8 = 1
        _ = systemWrite(fd, &byte, 1)
    }

    /// Accepts one connection: a blocking, close-on-exec socket with `TCP_NODELAY` (and
    /// `SO_NOSIGPIPE` on Darwin). `nil` when there is nothing to accept or accepting failed.
    package static func accept(_ listener: Int32) -> Int32? {
        let fd = systemAccept(listener, nil, nil)
        guard fd >= 0 else { return nil }
        setCloseOnExec(fd)
        // BSD sockets inherit O_NONBLOCK from the listener; Linux ones do not. Make sure.
        try? setNonBlocking(fd, false)
        var yes: Int32 = 1
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &yes, socklen_t(MemoryLayout<Int32>.size))
        #if canImport(Darwin)
        _ = setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &yes, socklen_t(MemoryLayout<Int32>.size))
        #endif
        return fd
    }

    /// Reads up to `count` bytes into `buffer`. Returns 0 at the end of the stream; throws on errors.
    static func receive(_ fd: Int32, into buffer: UnsafeMutableRawPointer, count: Int) throws -> Int {
        while true {
            let read = recv(fd, buffer, count, 0)
            if read >= 0 { return read }
            if errno == EINTR { continue }
            throw Failure(call: "recv", code: errno)
        }
    }

    /// Writes all of `data`; `false` when the connection failed (the peer is gone, or the server
    /// shut the socket down). Never raises SIGPIPE.
    @discardableResult
    package static func sendAll(_ fd: Int32, _ data: Data) -> Bool {
        data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> Bool in
            guard var pointer = raw.baseAddress else { return true }
            var remaining = raw.count
            while remaining > 0 {
                #if canImport(Glibc)
                let sent = send(fd, pointer, remaining, Int32(MSG_NOSIGNAL))
                #else
                let sent = send(fd, pointer, remaining, 0)
                #endif
                if sent < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                pointer += sent
                remaining -= sent
            }
            return true
        }
    }

    /// Shuts both directions of a connection down: a thread blocked on it wakes up, the peer sees
    /// the connection closed. The descriptor stays open until ``close(_:)``.
    package static func shutdownBoth(_ fd: Int32) {
        _ = shutdown(fd, Int32(SHUT_RDWR))
    }

    package static func close(_ fd: Int32) {
        _ = systemClose(fd)
    }

    private static func setCloseOnExec(_ fd: Int32) {
        let flags = fcntl(fd, F_GETFD)
        if flags >= 0 { _ = fcntl(fd, F_SETFD, flags | FD_CLOEXEC) }
    }

    private static func setNonBlocking(_ fd: Int32, _ on: Bool) throws {
        let flags = fcntl(fd, F_GETFL)
        guard flags >= 0 else { throw Failure(call: "fcntl(F_GETFL)", code: errno) }
        let wanted = on ? flags | O_NONBLOCK : flags & ~O_NONBLOCK
        guard wanted == flags || fcntl(fd, F_SETFL, wanted) == 0 else { throw Failure(call: "fcntl(F_SETFL)", code: errno) }
    }
}

#if canImport(Glibc)
private let systemClose = Glibc.close
private let systemWrite = Glibc.write
private let systemAccept = Glibc.accept
#else
private let systemClose = Darwin.close
private let systemWrite = Darwin.write
private let systemAccept = Darwin.accept
#endif

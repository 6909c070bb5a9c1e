package import Foundation
#if canImport(Glibc)
import Glibc
private let systemConnect = Glibc.connect
#else
import Darwin
private let systemConnect = Darwin.connect
#endif

/// The POSIX calls the fault proxy needs beyond the test server's ``Socket`` (accepting, sending,
/// shutting down and closing are the server's) (Glibc or Darwin). Descriptors are close-on-exec, so the
/// child processes the tests start do not inherit them, and writes never raise SIGPIPE.
package enum ProxySocket {
    struct Failure: Error, CustomStringConvertible {
        let call: String
        let code: Int32
        var description: String { "\(call) failed: \(String(cString: strerror(code))) (errno \(code))" }
    }

    private static func newSocket() throws -> Int32 {
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw Failure(call: "socket", code: errno) }
        let flags = fcntl(fd, F_GETFD)
        if flags >= 0 { _ = fcntl(fd, F_SETFD, flags | FD_CLOEXEC) }
        var yes: Int32 = 1
        #if canImport(Darwin)
        _ = setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &yes, socklen_t(MemoryLayout<Int32>.size))
        #endif
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &yes, socklen_t(MemoryLayout<Int32>.size))
        return fd
    }

    private static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        #if canImport(Darwin)
        address.sin_len = UInt8(MemoryLayout<sockaddr_in>.size)
        #endif
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr = in_addr(s_addr: UInt32(0x7F00_0001).bigEndian)
        return address
    }

    /// A socket listening on 127.0.0.1, on a port the kernel picks.
    package static func listen() throws -> (fd: Int32, port: UInt16) {
        let fd = try newSocket()
        var yes: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, systemListen(fd, 128) == 0 else {
            let code = errno
            close(fd)
            throw Failure(call: "bind/listen", code: code)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return (fd, UInt16(bigEndian: address.sin_port))
    }

    /// A blocking connection to 127.0.0.1:`port`.
    package static func connect(port: UInt16) throws -> Int32 {
        let fd = try newSocket()
        var address = loopback(port: port)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { systemConnect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            let code = errno
            close(fd)
            throw Failure(call: "connect", code: code)
        }
        return fd
    }

    /// Waits until `fd` is readable (or closed, or in error), at most `milliseconds`.
    package static func waitReadable(_ fd: Int32, milliseconds: Int32) -> Bool {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, milliseconds) > 0
    }

    /// Reads what is there (after ``waitReadable(_:milliseconds:)``): nil at the end of the stream
    /// or on an error.
    package static func receive(_ fd: Int32, max: Int = 16_384) -> Data? {
        var buffer = [UInt8](repeating: 0, count: max)
        while true {
            let count = recv(fd, &buffer, max, 0)
            if count > 0 { return Data(buffer[0..<count]) }
            if count < 0 && errno == EINTR { continue }
            return nil
        }
    }

    /// Closes with a TCP reset (SO_LINGER 0): the peer sees ECONNRESET, not an orderly end.
    package static func reset(_ fd: Int32) {
        var option = linger(l_onoff: 1, l_linger: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
        close(fd)
    }
}

#if canImport(Glibc)
private let systemListen = Glibc.listen
#else
private let systemListen = Darwin.listen
#endif

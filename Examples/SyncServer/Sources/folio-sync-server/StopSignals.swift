import Foundation
#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// SIGINT and SIGTERM as a stop request. The handlers are installed before the server starts
/// (so a signal sent right after the "listening" line is never missed) and only write one byte
/// to a pipe, which is all a signal handler may safely do; a thread waits on the other end.
enum StopSignals {
    /// Installs the handlers.
    /// - Throws: ``OptionError`` if the pipe cannot be made.
    static func install() throws(OptionError) {
        guard signalPipe.write >= 0 else { throw OptionError("cannot create the signal pipe (errno \(errno))") }
        for number in [SIGINT, SIGTERM] {
            signal(number) { _ in
                var byte: UInt8 = 1
                _ = write(signalPipe.write, &byte, 1)   // a full pipe already holds a stop request
            }
        }
    }

    /// Returns once a signal came (at once if one came already).
    static func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread {
                var byte: UInt8 = 0
                while read(signalPipe.read, &byte, 1) < 0 && errno == EINTR {}
                continuation.resume()
            }
        }
    }
}

/// The pipe's two ends; (-1, -1) if it could not be made.
private let signalPipe: (read: Int32, write: Int32) = {
    var ends: [Int32] = [-1, -1]
    guard pipe(&ends) == 0 else { return (-1, -1) }
    return (ends[0], ends[1])
}()

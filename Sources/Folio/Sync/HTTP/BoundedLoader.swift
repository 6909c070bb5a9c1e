internal import Foundation
#if canImport(FoundationNetworking)
internal import FoundationNetworking
#endif

/// Runs URLSession data tasks whose response body is capped: a body over the limit cancels the
/// task (the server's answers are untrusted input; an oversized one must not exhaust memory).
///
/// All HTTP of the library goes through here. One session per transport; the delegate routes the
/// callbacks of each task by its identifier. Cancelling the calling task cancels the request.
final class BoundedLoader: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    /// What a request produced.
    enum Result {
        case response(HTTPURLResponse, Data)
        case tooLarge(HTTPURLResponse?)
        case failed(any Error)
    }

    private struct Pending {
        var continuation: CheckedContinuation<Result, Never>
        var response: HTTPURLResponse?
        var data = Data()
        var tooLarge = false
    }

    private let limit: Int
    private let lock = NSLock()
    private var pending: [Int: Pending] = [:]
    private var session: URLSession?

    init(configuration: URLSessionConfiguration, limit: Int) {
        self.limit = limit
        super.init()
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        session = URLSession(configuration: configuration, delegate: self, delegateQueue: queue)
    }

    /// Ends the session: requests in flight are cancelled.
    func invalidate() {
        lock.lock()
        let session = self.session
        self.session = nil
        lock.unlock()
        session?.invalidateAndCancel()
    }

    func load(_ request: URLRequest) async -> Result {
        guard let task = lock.withLock({ session?.dataTask(with: request) }) else { return .failed(URLError(.cancelled)) }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result, Never>) in
                lock.withLock { pending[task.taskIdentifier] = Pending(continuation: continuation) }
                task.resume()
            }
        } onCancel: {
            task.cancel()
        }
    }

    // MARK: URLSessionDataDelegate

    /// No redirect is followed here: the transport decides (same origin only, PROTOCOL.md), so
    /// credentials and idempotency keys never reach another host.
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        // Answered off the delegate queue: swift-corelibs-foundation delivers the unfollowed
        // redirect as the response from inside this callback and waits for the delegate queue,
        // which this callback occupies (answering inline hangs the task until it times out).
        DispatchQueue.global().async { completionHandler(nil) }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        lock.lock()
        var cancel = false
        var whole: Pending?
        if var entry = pending[dataTask.taskIdentifier], !entry.tooLarge {
            // The response is read here, not in a `didReceive response` callback: that one costs a
            // hop to the delegate queue per request (and swift-corelibs-foundation ignores its
            // disposition anyway); a declared length over the limit ends the task at its first bytes.
            if entry.response == nil { entry.response = dataTask.response as? HTTPURLResponse }
            if (entry.response?.expectedContentLength ?? -1) > Int64(limit) || entry.data.count + data.count > limit {
                entry.tooLarge = true
                entry.data = Data()
                cancel = true
            } else {
                entry.data.append(data)
            }
            if !entry.tooLarge, let response = entry.response, Self.isWhole(entry.data, of: response) {
                pending[dataTask.taskIdentifier] = nil
                whole = entry
            } else {
                pending[dataTask.taskIdentifier] = entry
            }
        }
        lock.unlock()
        if cancel { dataTask.cancel() }
        // The whole answer is here: the caller goes on now, not after one more hop to the delegate
        // queue for the task's completion (which then finds nothing pending).
        if let whole, let response = whole.response { whole.continuation.resume(returning: .response(response, whole.data)) }
    }

    /// Whether `data` is all of the response's body: exactly the length it declared, sent as is
    /// (no `Content-Encoding`, whose declared length is not that of the decoded bytes).
    private static func isWhole(_ data: Data, of response: HTTPURLResponse) -> Bool {
        let length = response.expectedContentLength
        guard length > 0, Int64(data.count) == length else { return false }
        let encoding = response.value(forHTTPHeaderField: "Content-Encoding")
        return encoding == nil || encoding?.lowercased() == "identity"
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let entry = lock.withLock({ pending.removeValue(forKey: task.taskIdentifier) }) else { return }
        let response = entry.response ?? task.response as? HTTPURLResponse
        if entry.tooLarge || (response?.expectedContentLength ?? -1) > Int64(limit) {
            entry.continuation.resume(returning: .tooLarge(response))
        } else if let error {
            entry.continuation.resume(returning: .failed(error))
        } else if let response {
            entry.continuation.resume(returning: .response(response, entry.data))
        } else {
            entry.continuation.resume(returning: .failed(URLError(.badServerResponse)))
        }
    }
}

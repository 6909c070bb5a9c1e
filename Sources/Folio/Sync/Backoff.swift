/// Exponential backoff with jitter: the n-th retry waits between half and all of
/// `initial × 2^(n-1)`, capped at `maximum`, and never less than the server's `Retry-After`
/// (itself capped at `maxRetryAfter`).
struct Backoff {
    var initial: Duration
    var maximum: Duration
    var maxRetryAfter: Duration

    func delay<G: RandomNumberGenerator>(attempt: Int, retryAfter: Duration?, using generator: inout G) -> Duration {
        let exponent = min(max(attempt - 1, 0), 30)
        var delay = initial * (1 << exponent)
        if delay > maximum || delay < .zero { delay = maximum }
        let jitter = Double.random(in: 0.5...1.0, using: &generator)
        delay = delay * jitter
        if let retryAfter { delay = max(delay, min(retryAfter, maxRetryAfter)) }
        return delay
    }
}

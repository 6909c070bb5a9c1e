import Hummingbird
import NIOCore

/// Hummingbird's basic request context plus the connection's channel, so the adapter can stop
/// reading a request whose body it refuses (see ``HTTPAdapter``).
struct SyncRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    /// The connection the request came on.
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }
}

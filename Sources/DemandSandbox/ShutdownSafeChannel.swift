import HummingbirdCore
import Logging
import NIOCore
import Synchronization

/// Hummingbird's HTTP/1.1 child channel, made safe to stop while connections are being accepted (issue 31 item 7).
///
/// The bug lies between Hummingbird and SwiftNIO, not here: Hummingbird's `Server.run` hands accepted connections
/// from the listening `NIOAsyncChannel`'s inbound stream to handlers (`for try await childChannel in inbound`). Each
/// is a child `NIOAsyncChannel` made with `init(wrappingChannelSynchronously:)`, whose outbound `NIOAsyncWriter` traps
/// when it is released without `finish()` ("Deinited NIOAsyncWriter without calling finish()"). Cancelling the server
/// (how the sandbox stops) ends that loop while connections accepted a moment earlier are still buffered in the
/// stream, or still being set up: NIO drops them (`NIOAsyncChannelHandler` empties its buffer once the stream has
/// finished), the last reference to the writer goes with the child's `channelActive`, and the process dies with
/// SIGILL. Known upstream as apple/swift-nio#2637 / #3481 (a fix, apple/swift-nio#3111, is not released); a graceful
/// shutdown narrows the window but does not close it (setups still in flight when the listener closes).
///
/// The remedy needs no particular ordering: the value handed to the server is a ``Connection`` that finishes the
/// writer and closes the channel itself when it is released without ever reaching a handler. A connection that does
/// reach one is served exactly as by `HTTP1Channel` (whose `executeThenClose` finishes the writer as usual).
struct ShutdownSafeHTTP1Channel: ServerChildChannel {
    /// An accepted connection on its way to a handler.
    final class Connection: ServerChildChannelValue {
        let asyncChannel: HTTP1Channel.Value
        /// Set when a handler took the connection over.
        let handedOver = Atomic<Bool>(false)

        init(_ asyncChannel: HTTP1Channel.Value) { self.asyncChannel = asyncChannel }

        var channel: any Channel { asyncChannel.channel }

        deinit {
            // Dropped unserved (the server stopped first): no one will ever call executeThenClose.
            guard !handedOver.load(ordering: .acquiring) else { return }
            asyncChannel.outbound.finish()
            asyncChannel.channel.close(promise: nil)
        }
    }

    let http1: HTTP1Channel

    /// A server builder for `Application(server:)` serving `responder` this way.
    static func builder(configuration: HTTP1Channel.Configuration = .init()) -> HTTPServerBuilder {
        HTTPServerBuilder { responder in
            ShutdownSafeHTTP1Channel(http1: HTTP1Channel(responder: responder, configuration: configuration))
        }
    }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Connection> {
        http1.setup(channel: channel, logger: logger).map { Connection($0) }
    }

    func handle(value: Connection, logger: Logger) async {
        value.handedOver.store(true, ordering: .releasing)
        await http1.handle(value: value.asyncChannel, logger: logger)
    }
}

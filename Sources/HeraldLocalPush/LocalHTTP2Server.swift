import Foundation
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL
import Synchronization

/// One request as the local push servers' routes see it.
struct LocalHTTPRequest: Sendable {
    var method: HTTPMethod
    var path: String
    var headers: HTTPHeaders
    var body: ByteBuffer
    var receivedAt: Date

    /// The first value of header `name` (case-insensitive).
    func header(_ name: String) -> String? { headers.first(name: name) }
}

/// The answer a route gives.
struct LocalHTTPResponse: Sendable {
    var status: Int
    var headers: [(String, String)] = []
    var body: [UInt8] = []

    /// A response with a JSON body made from `object` (dictionaries, arrays, strings, numbers).
    static func json(_ status: Int, _ object: [String: any Sendable], headers: [(String, String)] = []) -> LocalHTTPResponse {
        let body = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
        return LocalHTTPResponse(status: status, headers: [("content-type", "application/json")] + headers, body: Array(body))
    }
}

/// The HTTP/2-over-TLS server under the local APNs and FCM servers: it listens on 127.0.0.1 at
/// a free port, accepts only connections that negotiate `h2`, collects each stream's request
/// and writes the answer its route gives, after the delay set.
final class LocalHTTP2Server: Sendable {
    typealias Route = @Sendable (LocalHTTPRequest) async -> LocalHTTPResponse

    let port: Int
    private let group: MultiThreadedEventLoopGroup
    private let listener: any Channel
    private let core: Core

    private init(port: Int, group: MultiThreadedEventLoopGroup, listener: any Channel, core: Core) {
        self.port = port
        self.group = group
        self.listener = listener
        self.core = core
    }

    /// Binds and starts serving with `threads` event loops.
    static func start(tls: TLSConfiguration, threads: Int, route: @escaping Route) async throws -> LocalHTTP2Server {
        let sslContext = try NIOSSLContext(configuration: tls)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: max(1, threads))
        let core = Core(route: route)
        do {
            let listener = try await ServerBootstrap(group: group)
                .serverChannelOption(.backlog, value: 1024)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
                .childChannelInitializer { channel in
                    core.opened(channel)
                    return channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: sslContext))
                    }.flatMap {
                        channel.configureHTTP2SecureUpgrade(
                            h2ChannelConfigurator: { channel in Self.configureHTTP2(channel, core: core) },
                            // HTTP/2 only, as APNs and FCM: a client that does not offer h2 is dropped.
                            http1ChannelConfigurator: { channel in channel.close() }
                        )
                    }
                }
                .bind(host: "127.0.0.1", port: 0)
                .get()
            guard let port = listener.localAddress?.port else {
                try? await listener.close()
                throw LocalPushServerError(message: "the local HTTP/2 server has no port")
            }
            return LocalHTTP2Server(port: port, group: group, listener: listener, core: core)
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
    }

    private static func configureHTTP2(_ channel: any Channel, core: Core) -> EventLoopFuture<Void> {
        var connection = NIOHTTP2Handler.ConnectionConfiguration()
        connection.initialSettings = nioDefaultSettings.filter { $0.parameter != .maxConcurrentStreams }
        connection.initialSettings.append(HTTP2Setting(parameter: .maxConcurrentStreams, value: 1000))
        connection.targetWindowSize = 1 << 20
        return channel.configureHTTP2Pipeline(
            mode: .server,
            connectionConfiguration: connection,
            streamConfiguration: NIOHTTP2Handler.StreamConfiguration()
        ) { stream in
            stream.eventLoop.makeCompletedFuture {
                try stream.pipeline.syncOperations.addHandlers([HTTP2FramePayloadToHTTP1ServerCodec(), StreamHandler(core: core)])
            }
        }.map { _ in }
    }

    /// Connections accepted since the start.
    var connectionsAccepted: Int { core.state.withLock { $0.accepted } }

    /// Connections open now.
    var openConnections: Int { core.state.withLock { $0.open.count } }

    /// Delays every answer by `duration` (zero: none).
    func setDelay(_ duration: Duration) { core.state.withLock { $0.delay = duration } }

    /// Closes every open connection at once, under TLS: no GOAWAY, no close_notify, streams in
    /// flight get no answer. Returns when they are closed.
    func dropConnections() async {
        let open = core.state.withLock { Array($0.open.values) }
        for channel in open {
            channel.eventLoop.execute {
                // Closing from the TLS handler's context goes straight to the socket.
                if let tls = try? channel.pipeline.syncOperations.context(handlerType: NIOSSLServerHandler.self) {
                    tls.close(promise: nil)
                } else {
                    channel.close(promise: nil)
                }
            }
        }
        for channel in open { try? await channel.closeFuture.get() }
    }

    /// Stops listening, ends the answers under way (cutting their delay short), closes the
    /// connections and stops the event loops.
    func shutdown() async {
        try? await listener.close()
        await core.stopAnswering()
        await dropConnections()
        try? await group.shutdownGracefully()
    }

    /// What the connections and streams share: the route, the delay, the open connections and
    /// the answers under way.
    fileprivate final class Core: Sendable {
        struct State {
            var open: [ObjectIdentifier: any Channel] = [:]
            var accepted = 0
            var delay = Duration.zero
            var answering: [Int: Task<Void, Never>] = [:]
            var answersStarted = 0
            var stopping = false
        }

        let route: Route
        let state = Mutex(State())

        init(route: @escaping Route) { self.route = route }

        func opened(_ channel: any Channel) {
            let id = ObjectIdentifier(channel)
            state.withLock {
                $0.accepted += 1
                $0.open[id] = channel
            }
            channel.closeFuture.whenComplete { _ in _ = self.state.withLock { $0.open.removeValue(forKey: id) } }
        }

        /// Asks the route on a task of its own, waits the delay and completes `promise`. The
        /// task is kept until it ends, so that shutdown can wait for it: a promise must not be
        /// completed once its event loop has stopped.
        func answer(_ request: LocalHTTPRequest, promise: EventLoopPromise<LocalHTTPResponse>) {
            state.withLock { state in
                guard !state.stopping else { return promise.fail(CancellationError()) }
                state.answersStarted += 1
                let id = state.answersStarted
                state.answering[id] = Task {
                    let response = await self.route(request)
                    let delay = self.state.withLock { $0.delay }
                    if delay > .zero { try? await Task.sleep(for: delay) }
                    promise.succeed(response)
                    self.state.withLock { _ = $0.answering.removeValue(forKey: id) }
                }
            }
        }

        /// Takes no more requests, cancels the answers under way and waits for them.
        func stopAnswering() async {
            let tasks = state.withLock { state in
                state.stopping = true
                return Array(state.answering.values)
            }
            for task in tasks { task.cancel() }
            for task in tasks { await task.value }
        }
    }

    /// Collects one stream's request, asks the route and writes its answer.
    private final class StreamHandler: ChannelInboundHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart

        private let core: Core
        private var head: HTTPRequestHead?
        private var body = ByteBuffer()

        init(core: Core) { self.core = core }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                self.head = head
            case .body(var part):
                body.writeBuffer(&part)
            case .end:
                guard let head else { return context.close(promise: nil) }
                let request = LocalHTTPRequest(method: head.method, path: head.uri, headers: head.headers, body: body, receivedAt: Date())
                let promise = context.eventLoop.makePromise(of: LocalHTTPResponse.self)
                promise.futureResult.assumeIsolated().whenSuccess { response in self.write(response, context: context) }
                core.answer(request, promise: promise)
            }
        }

        private func write(_ response: LocalHTTPResponse, context: ChannelHandlerContext) {
            var headers = HTTPHeaders(response.headers)
            headers.replaceOrAdd(name: "content-length", value: String(response.body.count))
            let head = HTTPResponseHead(version: .http2, status: HTTPResponseStatus(statusCode: response.status), headers: headers)
            context.write(wrapOutboundOut(.head(head)), promise: nil)
            if !response.body.isEmpty {
                context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: response.body)))), promise: nil)
            }
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            context.close(promise: nil)
        }
    }
}

/// A local push server could not start.
public struct LocalPushServerError: Error, CustomStringConvertible {
    public var message: String
    public init(message: String) { self.message = message }
    public var description: String { message }
}

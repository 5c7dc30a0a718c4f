import Foundation
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import NIOSSL
import Synchronization

/// A push service's answer to one request.
public struct PushResponse: Sendable {
    public var status: Int
    public var headers: HPACKHeaders
    public var body: ByteBuffer

    public init(status: Int, headers: HPACKHeaders = [:], body: ByteBuffer = ByteBuffer()) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// One request to a push service: `POST <path>` with its headers (lowercase names) and body.
public struct PushRequest: Sendable {
    public var path: String
    /// `.nonIndexable` for a path used once (a device's): keeps the HPACK table for the
    /// headers every request repeats.
    public var pathIndexing: HPACKIndexing
    public var headers: HPACKHeaders
    public var body: ByteBuffer

    public init(path: String, pathIndexing: HPACKIndexing = .indexable, headers: HPACKHeaders, body: ByteBuffer) {
        self.path = path
        self.pathIndexing = pathIndexing
        self.headers = headers
        self.body = body
    }
}

/// Why a request got no answer.
enum HTTP2PushError: Error, CustomStringConvertible {
    case connection(String)
    case timeout
    case reset(HTTP2ErrorCode)

    var description: String {
        switch self {
        case .connection(let reason): "connection: \(reason)"
        case .timeout: "timeout"
        case .reset(let code): "connection: stream reset (\(code))"
        }
    }
}

/// One HTTP/2 connection to a push service, on swift-nio-http2 directly: async-http-client
/// opens a child channel per request and writes and flushes each alone, which cost the
/// sender 0.27 of the local APNs server's ceiling (`make bench`, docs/sender.md). Here the
/// requests of any number of tasks are queued and written as frames, at most `maxStreams` open
/// at once: a stream that closes lets the next queued request in within the same event-loop
/// turn, with one flush per burst of answers, so the connection never waits for a task to
/// wake. Answers are matched by stream id; a sweep fails the ones older than the timeout. A connection the server closed (or sent GOAWAY on) is replaced by the
/// next request.
final class HTTP2PushConnection: Sendable {
    let host: String
    let port: Int
    let authority: String
    let timeout: TimeAmount
    /// Streams open at once; more requests wait in the queue for a stream to close.
    let maxStreams: Int
    private let tls: NIOSSLContext
    private let current = Mutex<Slot>(.none)

    private enum Slot {
        case none
        case connecting(EventLoopFuture<Link>)
        case ready(Link)
    }

    /// A live connection: its channel and the queue its handler drains.
    struct Link: Sendable {
        var channel: any Channel
        var outbox: Outbox
    }

    init(url: URL, tls: NIOSSLContext, timeout: TimeInterval, maxStreams: Int) {
        let host = url.host ?? "localhost"
        self.host = host
        port = url.port ?? 443
        authority = url.port.map { "\(host):\($0)" } ?? host
        self.tls = tls
        self.timeout = .milliseconds(Int64(timeout * 1000))
        self.maxStreams = maxStreams
    }

    /// Queues `requests` (connecting first if needed) and returns the futures of their answers,
    /// in order; a connection that cannot be made fails them all.
    func submit(_ requests: [PushRequest]) async -> [EventLoopFuture<PushResponse>] {
        let link: Link
        do {
            link = try await connected()
        } catch {
            let loop = MultiThreadedEventLoopGroup.singleton.next()
            return requests.map { _ in loop.makeFailedFuture(error) }
        }
        let loop = link.channel.eventLoop
        let pending = requests.map { Pending(request: $0, promise: loop.makePromise(of: PushResponse.self)) }
        if let closed = link.outbox.add(pending) {
            for request in pending { request.promise.fail(HTTP2PushError.connection(closed)) }
        }
        return pending.map(\.promise.futureResult)
    }

    func close() async {
        let slot = current.withLock { current in
            defer { current = .none }
            return current
        }
        switch slot {
        case .none: break
        case .connecting(let future): if let link = try? await future.get() { try? await link.channel.close() }
        case .ready(let link): try? await link.channel.close()
        }
    }

    private func connected() async throws -> Link {
        enum Next {
            case use(Link)
            case wait(EventLoopFuture<Link>)
        }
        let next: Next = current.withLock { current in
            switch current {
            case .ready(let link) where link.outbox.closedReason == nil && link.channel.isActive:
                return .use(link)
            case .connecting(let future):
                return .wait(future)
            default:
                let future = connect()
                current = .connecting(future)
                return .wait(future)
            }
        }
        switch next {
        case .use(let link):
            return link
        case .wait(let future):
            do {
                let link = try await future.get()
                current.withLock { current in
                    if case .connecting(let pending) = current, pending === future { current = .ready(link) }
                }
                return link
            } catch {
                current.withLock { current in
                    if case .connecting(let pending) = current, pending === future { current = .none }
                }
                throw HTTP2PushError.connection("cannot connect to \(authority): \(error)")
            }
        }
    }

    private func connect() -> EventLoopFuture<Link> {
        let outbox = Outbox()
        let (tls, host, authority, timeout, maxStreams) = (tls, host, authority, timeout, maxStreams)
        let serverName = Self.isIPAddress(host) ? nil : host
        return ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(ChannelOptions.tcpOption(.tcp_nodelay), value: 1)
            .connectTimeout(.seconds(10))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    try pipeline.addHandler(NIOSSLClientHandler(context: tls, serverHostname: serverName))
                    try pipeline.addHandler(
                        NIOHTTP2Handler(
                            mode: .client,
                            initialSettings: [
                                HTTP2Setting(parameter: .enablePush, value: 0),
                                HTTP2Setting(parameter: .maxConcurrentStreams, value: 100),
                                HTTP2Setting(parameter: .initialWindowSize, value: 1 << 20),
                            ],
                            // The header blocks are Herald's own (and the service's answers are
                            // read by status and a few names): validating each cost 3 % of the
                            // sender's CPU.
                            headerBlockValidation: .disabled, contentLengthValidation: .disabled))
                    try pipeline.addHandler(
                        PushStreamsHandler(outbox: outbox, authority: authority, timeout: timeout, maxStreams: maxStreams))
                }
            }
            .connect(host: host, port: port)
            .map { Link(channel: $0, outbox: outbox) }
    }

    static func isIPAddress(_ host: String) -> Bool {
        (try? SocketAddress(ipAddress: host, port: 0)) != nil
    }
}

/// A queued request and where its answer goes.
struct Pending: Sendable {
    var request: PushRequest
    var promise: EventLoopPromise<PushResponse>
}

/// The requests waiting to be written on one connection. `add` asks the event loop for one
/// drain when the queue was empty, so a burst of requests is written with one flush.
final class Outbox: Sendable {
    struct State {
        var pending: [Pending] = []
        var drainScheduled = false
        var closed: String?
        var drain: (@Sendable () -> Void)?
    }

    private let state = Mutex(State())

    /// Sets the function that drains the queue on the event loop (the handler's).
    func attach(_ drain: @escaping @Sendable () -> Void) { state.withLock { $0.drain = drain } }

    /// Queues `pending`; returns why it cannot be, if the connection is closed.
    func add(_ pending: [Pending]) -> String? {
        let (closed, drain): (String?, (@Sendable () -> Void)?) = state.withLock { state in
            if let closed = state.closed { return (closed, nil) }
            state.pending.append(contentsOf: pending)
            guard !state.drainScheduled, let drain = state.drain else { return (nil, nil) }
            state.drainScheduled = true
            return (nil, drain)
        }
        drain?()
        return closed
    }

    /// Takes up to `limit` of the oldest requests; the rest wait for the next drain.
    func take(max limit: Int) -> [Pending] {
        state.withLock { state in
            state.drainScheduled = false
            guard limit < state.pending.count else {
                defer { state.pending.removeAll(keepingCapacity: true) }
                return state.pending
            }
            let taken = Array(state.pending.prefix(limit))
            state.pending.removeFirst(limit)
            return taken
        }
    }

    /// Closes the queue; returns what was still waiting.
    func close(_ reason: String) -> [Pending] {
        state.withLock { state in
            if state.closed == nil { state.closed = reason }
            defer { state.pending.removeAll() }
            return state.pending
        }
    }

    var closedReason: String? { state.withLock { $0.closed } }
}

/// Writes queued requests as HTTP/2 frames and matches the answers to them (on the channel's
/// event loop). Grants the connection's flow-control window back as answer bodies arrive
/// (without a multiplexer, `NIOHTTP2Handler` leaves that to the next handler).
final class PushStreamsHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    struct Stream {
        var promise: EventLoopPromise<PushResponse>
        var started: NIODeadline
        var status: Int?
        var headers: HPACKHeaders = [:]
        var body: ByteBuffer?
    }

    private let outbox: Outbox
    private let authority: String
    private let timeout: TimeAmount
    private let maxStreams: Int
    private var context: ChannelHandlerContext?
    /// A stream closed since the last drain: queued requests may go.
    private var streamClosed = false
    private var streams: [HTTP2StreamID: Stream] = [:]
    private var nextStreamID = HTTP2StreamID(1)
    private var unacknowledgedBytes = 0
    private var goingAway = false
    private var sweep: RepeatedTask?

    init(outbox: Outbox, authority: String, timeout: TimeAmount, maxStreams: Int) {
        self.outbox = outbox
        self.authority = authority
        self.timeout = timeout
        self.maxStreams = max(1, maxStreams)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        let loop = context.eventLoop
        let bound = NIOLoopBound(self, eventLoop: loop)
        outbox.attach { loop.execute { bound.value.drain() } }
        sweep = loop.scheduleRepeatedTask(initialDelay: .seconds(1), delay: .seconds(1)) { _ in bound.value.expire() }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        sweep?.cancel()
        failAll("connection closed")
        self.context = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        failAll("connection closed by the server")
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let streamError = error as? NIOHTTP2Errors.StreamError {
            fail(streamError.streamID, HTTP2PushError.connection("\(streamError.baseError)"))
            return
        }
        failAll("\(error)")
        context.close(promise: nil)
    }

    func drain() {
        let room = maxStreams - streams.count
        guard let context, room > 0 else { return }
        let pending = outbox.take(max: room)
        guard !pending.isEmpty else { return }
        let now = NIODeadline.now()
        for request in pending {
            let id = nextStreamID
            nextStreamID = id.advanced(by: 2)
            var headers = HPACKHeaders([(":method", "POST"), (":scheme", "https"), (":authority", authority)])
            // A path names one device (APNs): indexed, it would only push the provider token
            // out of the connection's HPACK table, which then went in full with most requests.
            headers.add(name: ":path", value: request.request.path, indexing: request.request.pathIndexing)
            headers.add(contentsOf: request.request.headers)
            streams[id] = Stream(promise: request.promise, started: now)
            let body = request.request.body
            context.write(
                wrapOutboundOut(HTTP2Frame(streamID: id, payload: .headers(.init(headers: headers, endStream: body.readableBytes == 0)))),
                promise: nil)
            if body.readableBytes > 0 {
                context.write(
                    wrapOutboundOut(HTTP2Frame(streamID: id, payload: .data(.init(data: .byteBuffer(body), endStream: true)))), promise: nil
                )
            }
        }
        context.flush()
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if streamClosed {
            streamClosed = false
            drain()
        }
        context.fireChannelReadComplete()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        let id = frame.streamID
        switch frame.payload {
        case .headers(let payload):
            guard var stream = streams[id] else { return }
            if let status = payload.headers.first(name: ":status").flatMap({ Int($0) }) {
                if status < 200 { return }  // informational
                stream.status = status
                stream.headers = payload.headers
            } else {
                stream.headers.add(contentsOf: payload.headers)  // trailers
            }
            streams[id] = stream
            if payload.endStream { complete(id) }
        case .data(let payload):
            if case .byteBuffer(var bytes) = payload.data {
                acknowledge(bytes.readableBytes + (payload.paddingBytes ?? 0), context: context)
                if var stream = streams[id] {
                    if stream.body == nil { stream.body = bytes } else { stream.body!.writeBuffer(&bytes) }
                    streams[id] = stream
                }
            }
            if payload.endStream { complete(id) }
        case .rstStream(let code):
            fail(id, HTTP2PushError.reset(code))
        case .goAway(let lastStreamID, let code, _):
            // Streams above the last one will not be answered; new requests go to a new connection.
            goingAway = true
            for pending in outbox.close("the server is closing the connection (GOAWAY \(code))") {
                pending.promise.fail(HTTP2PushError.connection("GOAWAY \(code)"))
            }
            for stream in streams.keys where stream > lastStreamID { fail(stream, HTTP2PushError.connection("GOAWAY \(code)")) }
            if streams.isEmpty { context.close(promise: nil) }
        default:
            break
        }
    }

    private func acknowledge(_ bytes: Int, context: ChannelHandlerContext) {
        unacknowledgedBytes += bytes
        guard unacknowledgedBytes >= 32_768 else { return }
        context.writeAndFlush(
            wrapOutboundOut(HTTP2Frame(streamID: .rootStream, payload: .windowUpdate(windowSizeIncrement: unacknowledgedBytes))),
            promise: nil)
        unacknowledgedBytes = 0
    }

    private func complete(_ id: HTTP2StreamID) {
        guard let stream = streams.removeValue(forKey: id) else { return }
        streamClosed = true
        stream.promise.succeed(PushResponse(status: stream.status ?? 0, headers: stream.headers, body: stream.body ?? ByteBuffer()))
        if goingAway && streams.isEmpty { context?.close(promise: nil) }
    }

    private func fail(_ id: HTTP2StreamID, _ error: HTTP2PushError) {
        guard let stream = streams.removeValue(forKey: id) else { return }
        streamClosed = true
        stream.promise.fail(error)
    }

    private func failAll(_ reason: String) {
        for pending in outbox.close(reason) { pending.promise.fail(HTTP2PushError.connection(reason)) }
        let open = streams
        streams.removeAll()
        for stream in open.values { stream.promise.fail(HTTP2PushError.connection(reason)) }
    }

    /// Fails the requests older than the timeout and resets their streams.
    func expire() {
        guard let context, !streams.isEmpty else { return }
        let limit = NIODeadline.now() - timeout
        let late = streams.filter { $0.value.started < limit }.map(\.key)
        guard !late.isEmpty else { return }
        for id in late {
            fail(id, .timeout)
            context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .rstStream(.cancel))), promise: nil)
        }
        streamClosed = false
        drain()
        context.flush()
    }
}

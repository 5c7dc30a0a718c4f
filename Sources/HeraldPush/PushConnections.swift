import AsyncHTTPClient
import Foundation
import NIOCore
import NIOSSL
import Synchronization

/// How the sender talks to one push service: connections, streams, timeouts, trust.
public struct PushConnectionOptions: Sendable, Hashable {
    /// HTTP/2 connections per provider (APNs team, FCM project).
    public var connections: Int
    /// Requests in flight on one connection at most (streams multiplexed on it).
    public var streamsPerConnection: Int
    /// From sending a request to its whole answer; past it the attempt counts as lost.
    public var requestTimeout: TimeInterval
    /// A PEM file of extra certificate authorities to trust besides the system's (local test
    /// servers); nil trusts the system store only.
    public var extraTrustFile: String?

    public init(connections: Int = 2, streamsPerConnection: Int = 100, requestTimeout: TimeInterval = 15, extraTrustFile: String? = nil) {
        self.connections = max(1, connections)
        self.streamsPerConnection = max(1, streamsPerConnection)
        self.requestTimeout = requestTimeout
        self.extraTrustFile = extraTrustFile
    }

    /// The TLS context of the push connections: the system's trust store (plus
    /// `extraTrustFile`), full verification, ALPN `h2`.
    func makeTLSContext() throws -> NIOSSLContext {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.certificateVerification = .fullVerification
        tls.applicationProtocols = ["h2"]
        if let extraTrustFile { tls.additionalTrustRoots = [.file(extraTrustFile)] }
        return try NIOSSLContext(configuration: tls)
    }

    /// An async-http-client for the requests outside the push connections (the token endpoints,
    /// WNS), with the same trust; `connectionsPerHost` HTTP/1.1 connections at most per host
    /// (HTTP/2 hosts take one connection and multiplex).
    func makeClient(connectionsPerHost: Int = 8) -> HTTPClient {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.certificateVerification = .fullVerification
        if let extraTrustFile { tls.additionalTrustRoots = [.file(extraTrustFile)] }
        var configuration = HTTPClient.Configuration(
            tlsConfiguration: tls, redirectConfiguration: .disallow,
            timeout: .init(connect: .seconds(10), read: .milliseconds(Int64(requestTimeout * 1000))))
        configuration.httpVersion = .automatic
        configuration.connectionPool = .init(idleTimeout: .seconds(600), concurrentHTTP1ConnectionsPerHostSoftLimit: connectionsPerHost)
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }
}

/// A provider's connections: the requests of a batch are spread over them in turn, and each
/// keeps at most `streamsPerConnection` of its share in flight (`HTTP2PushConnection`).
final class PushConnections: Sendable {
    let connections: [HTTP2PushConnection]
    private let next = Atomic<Int>(0)
    private let outstanding = Atomic<Int>(0)

    init(endpoint: URL, options: PushConnectionOptions) throws {
        let tls = try options.makeTLSContext()
        connections = (0..<options.connections).map { _ in
            HTTP2PushConnection(url: endpoint, tls: tls, timeout: options.requestTimeout, maxStreams: options.streamsPerConnection)
        }
    }

    /// Requests sent or queued and not answered yet.
    var inFlight: Int { outstanding.load(ordering: .relaxed) }

    /// Sends `requests`, spread over the connections; the futures of their answers, in order.
    func submit(_ requests: [PushRequest]) async -> [EventLoopFuture<PushResponse>] {
        guard !requests.isEmpty else { return [] }
        let first = next.add(requests.count, ordering: .relaxed).oldValue
        var shares = [[Int]](repeating: [], count: connections.count)
        for index in requests.indices { shares[(first + index) % connections.count].append(index) }
        var futures = [EventLoopFuture<PushResponse>?](repeating: nil, count: requests.count)
        for (connection, share) in zip(connections, shares) where !share.isEmpty {
            let answers = await connection.submit(share.map { requests[$0] })
            for (index, answer) in zip(share, answers) { futures[index] = answer }
        }
        outstanding.add(requests.count, ordering: .relaxed)
        return futures.map { future in
            future!.always { [self] _ in outstanding.subtract(1, ordering: .relaxed) }
        }
    }

    func shutdown() async {
        for connection in connections { await connection.close() }
    }
}

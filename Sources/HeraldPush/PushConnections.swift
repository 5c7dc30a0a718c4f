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

    /// An async-http-client for the few requests outside the push connections (FCM's token
    /// endpoint), with the same trust.
    func makeClient() -> HTTPClient {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.certificateVerification = .fullVerification
        if let extraTrustFile { tls.additionalTrustRoots = [.file(extraTrustFile)] }
        var configuration = HTTPClient.Configuration(
            tlsConfiguration: tls, redirectConfiguration: .disallow,
            timeout: .init(connect: .seconds(10), read: .milliseconds(Int64(requestTimeout * 1000))))
        configuration.httpVersion = .automatic
        configuration.connectionPool = .init(idleTimeout: .seconds(600))
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }
}

/// A provider's connections, each with a bound on its requests in flight; a request takes
/// the least busy connection, or waits for room.
final class PushConnections: Sendable {
    struct State {
        var inFlight: [Int]
        var waiters: [(id: Int, continuation: CheckedContinuation<Int?, Never>)] = []
        var nextWaiter = 0
    }

    let connections: [HTTP2PushConnection]
    let perConnection: Int
    private let state: Mutex<State>

    init(endpoint: URL, options: PushConnectionOptions) throws {
        let tls = try options.makeTLSContext()
        connections = (0..<options.connections).map { _ in
            HTTP2PushConnection(url: endpoint, tls: tls, timeout: options.requestTimeout)
        }
        perConnection = options.streamsPerConnection
        state = Mutex(State(inFlight: Array(repeating: 0, count: options.connections)))
    }

    /// Requests in flight now, on all connections.
    var inFlight: Int { state.withLock { $0.inFlight.reduce(0, +) } }

    /// Sends `request` on a connection once one has room; nil when cancelled while waiting.
    func send(_ request: PushRequest) async throws -> PushResponse? {
        guard let index = await acquire() else { return nil }
        defer { release(index) }
        return try await connections[index].send(request)
    }

    private func acquire() async -> Int? {
        let id: Int
        let immediate: Int? = state.withLock { state in
            if let index = Self.leastBusy(state.inFlight, limit: perConnection) {
                state.inFlight[index] += 1
                return index
            }
            return nil
        }
        if let immediate { return immediate }
        id = state.withLock { state in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Int?, Never>) in
                let ready: Int?? = state.withLock { state in
                    if Task.isCancelled { return .some(nil) }
                    if let index = Self.leastBusy(state.inFlight, limit: perConnection) {
                        state.inFlight[index] += 1
                        return .some(index)
                    }
                    state.waiters.append((id, continuation))
                    return .none
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            let waiter = state.withLock { state in
                state.waiters.firstIndex { $0.id == id }.map { state.waiters.remove(at: $0) }
            }
            waiter?.continuation.resume(returning: nil)
        }
    }

    private func release(_ index: Int) {
        let waiter = state.withLock { state in
            if state.waiters.isEmpty {
                state.inFlight[index] -= 1
                return nil as CheckedContinuation<Int?, Never>?
            }
            return state.waiters.removeFirst().continuation
        }
        // The freed place goes straight to the longest waiter.
        waiter?.resume(returning: index)
    }

    private static func leastBusy(_ inFlight: [Int], limit: Int) -> Int? {
        var best: Int?
        for (index, count) in inFlight.enumerated() where count < limit {
            if best == nil || count < inFlight[best!] { best = index }
        }
        return best
    }

    func shutdown() async {
        for connection in connections { await connection.close() }
    }
}

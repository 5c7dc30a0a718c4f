import Foundation
import Logging

/// A fixed number of `RedisConnection`s shared by tasks, borrowed with `withConnection`.
///
/// Connections are opened lazily up to `size`. A borrower that finds none free waits (without
/// blocking a thread) until one is returned; waiting tasks are served first come, first
/// served, and a cancelled waiter leaves the queue with `CancellationError`. A borrowed
/// connection is exclusively the borrower's until its closure returns, so a pipeline or a
/// `SSCAN` loop is never interleaved with another task's commands.
public final class RedisConnectionPool: @unchecked Sendable {
    public let configuration: RedisConfiguration
    public let size: Int
    private let logger: Logger

    /// What a waiting borrower is handed: a connection, or the right to open one (a slot freed
    /// because opening a connection failed for someone else).
    private enum Grant {
        case connection(RedisConnection)
        case openSlot
    }
    private typealias Machine = RedisConnectionPoolStateMachine<RedisConnection, CheckedContinuation<Grant, any Error>>

    // Guarded by `lock`.
    private let lock = NSLock()
    private var machine: Machine

    public init(configuration: RedisConfiguration, size: Int, logger: Logger = Logger(label: "herald.redis.pool")) {
        self.configuration = configuration
        self.size = size
        self.logger = logger
        self.machine = Machine(size: size)
    }

    /// Connections opened so far (never more than `size`).
    public var openConnectionCount: Int {
        lock.withLock { machine.opened }
    }

    /// Borrows a connection for the duration of `body`, waiting if all are in use.
    public func withConnection<T>(_ body: (RedisConnection) async throws -> T) async throws -> T {
        let connection = try await lease()
        do {
            let value = try await body(connection)
            giveBack(connection)
            return value
        } catch {
            giveBack(connection)
            throw error
        }
    }

    /// The start-up check of `RedisConnection.verify()` on one of the pool's connections:
    /// throws one line when the URL does not fit the server (single node or cluster) or the
    /// cluster cannot serve every hash slot.
    public func verify() async throws {
        try await withConnection { try await $0.verify() }
    }

    /// For readiness probes: on a cluster, true when every hash slot has a master (the slot
    /// map is read again); on a single Redis, true (the caller's own command tells).
    public func everySlotServed() async -> Bool {
        guard configuration.cluster != nil else { return true }
        return (try? await verify()) != nil
    }

    /// Closes idle connections now and borrowed ones when they come back; waiting and later
    /// borrowers fail with `.closed`.
    public func shutdown() {
        let (idle, waiters) = lock.withLock { machine.shutdown() }
        for connection in idle { connection.close() }
        for waiter in waiters { waiter.resume(throwing: closedError()) }
    }

    private func lease() async throws -> RedisConnection {
        switch lock.withLock({ machine.lease() }) {
        case .shutDown: throw closedError()
        case .use(let connection): return connection
        case .open: return try await openInSlot()
        case .wait: break
        }
        let id = lock.withLock { machine.nextWaiterID() }
        // The lock is not held across the await: an already-cancelled task runs `onCancel`
        // at once on this thread, and it takes the lock.
        let grant = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Grant, any Error>) in
                lock.lock()
                if Task.isCancelled {
                    lock.unlock()
                    continuation.resume(throwing: CancellationError())
                    return
                }
                switch machine.lease() {
                case .shutDown:
                    lock.unlock()
                    continuation.resume(throwing: closedError())
                case .use(let connection):
                    lock.unlock()
                    continuation.resume(returning: .connection(connection))
                case .open:
                    lock.unlock()
                    continuation.resume(returning: .openSlot)
                case .wait:
                    machine.enqueue(continuation, id: id)
                    lock.unlock()
                }
            }
        } onCancel: {
            let waiter = lock.withLock { machine.cancel(id: id) }
            waiter?.resume(throwing: CancellationError())
        }
        switch grant {
        case .connection(let connection): return connection
        case .openSlot: return try await openInSlot()
        }
    }

    /// Opens a connection in a slot already reserved; passes the slot on or gives it up on failure.
    private func openInSlot() async throws -> RedisConnection {
        do {
            return try await RedisConnection.connect(configuration: configuration, logger: logger)
        } catch {
            let waiter = lock.withLock { machine.openFailed() }
            waiter?.resume(returning: .openSlot)
            throw error
        }
    }

    private func giveBack(_ connection: RedisConnection) {
        switch lock.withLock({ machine.giveBack(connection) }) {
        case .keep: break
        case .hand(let connection, let waiter): waiter.resume(returning: .connection(connection))
        case .close(let connection): connection.close()
        }
    }

    private func closedError() -> RedisError {
        RedisError(code: .closed, message: "the Redis connection pool for \(configuration.endpoint) is shut down")
    }
}

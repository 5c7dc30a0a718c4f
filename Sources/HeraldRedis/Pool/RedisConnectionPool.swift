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

    private struct Waiter {
        var id: Int
        var continuation: CheckedContinuation<Grant, any Error>
    }

    // Guarded by `lock`.
    private let lock = NSLock()
    private var idle: [RedisConnection] = []
    private var opened = 0
    private var waiters: [Waiter] = []
    private var nextWaiterID = 0
    private var isShutDown = false

    public init(configuration: RedisConfiguration, size: Int, logger: Logger = Logger(label: "herald.redis.pool")) {
        precondition(size > 0, "a Redis connection pool needs at least one connection")
        self.configuration = configuration
        self.size = size
        self.logger = logger
    }

    /// Connections opened so far (never more than `size`).
    public var openConnectionCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return opened
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

    /// Closes idle connections now and borrowed ones when they come back; waiting and later
    /// borrowers fail with `.closed`.
    public func shutdown() {
        lock.lock()
        isShutDown = true
        let idleConnections = idle
        idle.removeAll()
        opened -= idleConnections.count
        let pending = waiters
        waiters.removeAll()
        lock.unlock()
        for connection in idleConnections { connection.close() }
        for waiter in pending { waiter.continuation.resume(throwing: closedError()) }
    }

    private func lease() async throws -> RedisConnection {
        enum FastPath {
            case shutDown
            case idle(RedisConnection)
            case open
            case wait(id: Int)
        }
        let fastPath: FastPath = lock.withLock {
            if isShutDown { return .shutDown }
            if let connection = idle.popLast() { return .idle(connection) }
            if opened < size {
                opened += 1
                return .open
            }
            nextWaiterID += 1
            return .wait(id: nextWaiterID)
        }
        let id: Int
        switch fastPath {
        case .shutDown: throw closedError()
        case .idle(let connection): return connection
        case .open: return try await openInSlot()
        case .wait(let waiterID): id = waiterID
        }
        // The lock is not held across the await: an already-cancelled task runs `onCancel`
        // at once on this thread, and it takes the lock.
        let grant = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Grant, any Error>) in
                lock.lock()
                if Task.isCancelled {
                    lock.unlock()
                    continuation.resume(throwing: CancellationError())
                } else if isShutDown {
                    lock.unlock()
                    continuation.resume(throwing: closedError())
                } else if let connection = idle.popLast() {
                    lock.unlock()
                    continuation.resume(returning: .connection(connection))
                } else if opened < size {
                    opened += 1
                    lock.unlock()
                    continuation.resume(returning: .openSlot)
                } else {
                    waiters.append(Waiter(id: id, continuation: continuation))
                    lock.unlock()
                }
            }
        } onCancel: {
            lock.lock()
            let index = waiters.firstIndex { $0.id == id }
            let waiter = index.map { waiters.remove(at: $0) }
            lock.unlock()
            waiter?.continuation.resume(throwing: CancellationError())
        }
        switch grant {
        case .connection(let connection): return connection
        case .openSlot: return try await openInSlot()
        }
    }

    /// Opens a connection in a slot already counted in `opened`; gives the slot up on failure.
    private func openInSlot() async throws -> RedisConnection {
        do {
            return try await RedisConnection.connect(configuration: configuration, logger: logger)
        } catch {
            let waiter: Waiter? = lock.withLock {
                if waiters.isEmpty {
                    opened -= 1
                    return nil
                }
                return waiters.removeFirst()
            }
            waiter?.continuation.resume(returning: .openSlot)
            throw error
        }
    }

    private func giveBack(_ connection: RedisConnection) {
        lock.lock()
        if isShutDown {
            opened -= 1
            lock.unlock()
            connection.close()
            return
        }
        if !waiters.isEmpty {
            let waiter = waiters.removeFirst()
            lock.unlock()
            waiter.continuation.resume(returning: .connection(connection))
            return
        }
        idle.append(connection)
        lock.unlock()
    }

    private func closedError() -> RedisError {
        RedisError(code: .closed, message: "the Redis connection pool for \(configuration.endpoint) is shut down")
    }
}

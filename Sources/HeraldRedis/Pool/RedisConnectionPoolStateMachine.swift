/// The bookkeeping of `RedisConnectionPool` as a value: idle connections, slots opened, the
/// queue of waiting borrowers, shutdown. Each method says what the pool must do next (hand a
/// connection over, open one, wait, close); the pool does it outside its lock. The rules are
/// tested here without a server or real continuations.
///
/// `Connection` is `RedisConnection` in production; `Waiter` is a continuation.
struct RedisConnectionPoolStateMachine<Connection, Waiter> {
    let size: Int
    private var idle: [Connection] = []
    /// Connections open or being opened (never more than `size`).
    private(set) var opened = 0
    private var waiters: [(id: Int, waiter: Waiter)] = []
    private var lastWaiterID = 0
    private(set) var isShutDown = false

    init(size: Int) {
        precondition(size > 0, "a Redis connection pool needs at least one connection")
        self.size = size
    }

    var waiting: Int { waiters.count }

    /// What a borrower gets.
    enum Lease {
        case use(Connection)
        /// A slot is reserved: open a connection in it (`openFailed()` if that fails).
        case open
        /// All connections are in use: queue with `enqueue`.
        case wait
        case shutDown
    }

    mutating func lease() -> Lease {
        if isShutDown { return .shutDown }
        if let connection = idle.popLast() { return .use(connection) }
        if opened < size {
            opened += 1
            return .open
        }
        return .wait
    }

    /// A ticket for a borrower about to wait, so that its cancellation can find it.
    mutating func nextWaiterID() -> Int {
        lastWaiterID += 1
        return lastWaiterID
    }

    /// Queues `waiter` (after a `.wait` lease); it is served first come, first served.
    mutating func enqueue(_ waiter: Waiter, id: Int) {
        waiters.append((id, waiter))
    }

    /// The waiter with ticket `id`, if still queued, leaves the queue (its task was cancelled).
    mutating func cancel(id: Int) -> Waiter? {
        guard let index = waiters.firstIndex(where: { $0.id == id }) else { return nil }
        return waiters.remove(at: index).waiter
    }

    /// Opening a connection in a reserved slot failed: the slot goes to the first waiter, who
    /// opens a connection in it in turn, or is given up.
    mutating func openFailed() -> Waiter? {
        if waiters.isEmpty {
            opened -= 1
            return nil
        }
        return waiters.removeFirst().waiter
    }

    enum GiveBack {
        /// Hand it to this waiter.
        case hand(Connection, to: Waiter)
        /// Kept idle for the next borrower.
        case keep
        /// The pool is shut down: close it.
        case close(Connection)
    }

    mutating func giveBack(_ connection: Connection) -> GiveBack {
        if isShutDown {
            opened -= 1
            return .close(connection)
        }
        if !waiters.isEmpty { return .hand(connection, to: waiters.removeFirst().waiter) }
        idle.append(connection)
        return .keep
    }

    /// Shuts the pool down: the idle connections to close now and the waiters to fail;
    /// borrowed connections are closed as they come back.
    mutating func shutdown() -> (idle: [Connection], waiters: [Waiter]) {
        isShutDown = true
        let closing = idle
        idle.removeAll()
        opened -= closing.count
        let failing = waiters.map(\.waiter)
        waiters.removeAll()
        return (closing, failing)
    }
}

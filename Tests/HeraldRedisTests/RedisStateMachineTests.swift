@testable import HeraldRedis
import Testing

/// The connection's and the pool's rules, without a server: sockets and continuations are
/// plain values here.
@Suite("Redis connection and pool state machines")
struct RedisStateMachineTests {
    typealias Connection = RedisConnectionStateMachine<String>
    typealias Pool = RedisConnectionPoolStateMachine<String, Int>

    @Test("connect on first use, reuse the socket, reconnect after losing it and count that, forget the scripts with the socket")
    func connectionLife() {
        var machine = Connection(connectAttempts: 3, initialBackoff: 0.05, maximumBackoff: 0.15)
        guard case .connect = machine.acquire() else {
            Issue.record("a new connection connects first")
            return
        }
        #expect(machine.connected("socket-1") == false)
        guard case .use("socket-1") = machine.acquire() else {
            Issue.record("the socket is reused")
            return
        }
        machine.scriptLoaded("abc")
        machine.socketLost()
        #expect(machine.loadedScripts.isEmpty)
        guard case .connect = machine.acquire() else {
            Issue.record("a lost socket is replaced")
            return
        }
        #expect(machine.connected("socket-2") == true)
        #expect(machine.statistics.reconnects == 1)
        machine.close()
        guard case .fail = machine.acquire() else {
            Issue.record("a closed connection refuses commands")
            return
        }
    }

    @Test("connect attempts back off doubling up to the maximum; a refusal by the server is final")
    func connectBackoff() {
        let machine = Connection(connectAttempts: 4, initialBackoff: 0.05, maximumBackoff: 0.15)
        let refused = RedisError(code: .connection, message: "refused")
        #expect(
            (1...4).map { machine.connectFailed(attempt: $0, error: refused) } == [
                .retry(after: 0.05), .retry(after: 0.1), .retry(after: 0.15), .giveUp,
            ])
        #expect(machine.connectFailed(attempt: 1, error: RedisError(code: .server, message: "WRONGPASS")) == .giveUp)
    }

    @Test("a failed read-only command is retried once after a socket error; writes and timeouts never are")
    func commandRetries() {
        var machine = Connection(connectAttempts: 1, initialBackoff: 0, maximumBackoff: 0)
        machine.connected("s")
        let io = RedisError(code: .io, message: "reset")
        #expect(machine.commandFailed(io, readOnly: true, alreadyRetried: false) == .retry)
        #expect(machine.commandFailed(io, readOnly: true, alreadyRetried: true) == .fail)
        #expect(machine.commandFailed(io, readOnly: false, alreadyRetried: false) == .fail)
        #expect(machine.commandFailed(RedisError(code: .timeout, message: "slow"), readOnly: true, alreadyRetried: false) == .fail)
        #expect(machine.statistics.retries == 1)
        guard case .connect = machine.acquire() else {
            Issue.record("a failed command discards the socket")
            return
        }
    }

    @Test("the pool opens up to its size, then queues borrowers first come first served")
    func poolLeases() {
        var pool = Pool(size: 2)
        guard case .open = pool.lease(), case .open = pool.lease(), case .wait = pool.lease() else {
            Issue.record("two opens, then a wait")
            return
        }
        pool.enqueue(1, id: pool.nextWaiterID())
        pool.enqueue(2, id: pool.nextWaiterID())
        guard case .hand("a", to: 1) = pool.giveBack("a") else {
            Issue.record("the first waiter gets the first connection back")
            return
        }
        guard case .hand("b", to: 2) = pool.giveBack("b") else {
            Issue.record("then the second")
            return
        }
        guard case .keep = pool.giveBack("a"), case .use("a") = pool.lease() else {
            Issue.record("an idle connection is reused")
            return
        }
        #expect(pool.opened == 2)
    }

    @Test("a slot whose connection failed to open passes to the first waiter, or is freed")
    func poolOpenFailures() {
        var pool = Pool(size: 1)
        _ = pool.lease()
        pool.enqueue(7, id: pool.nextWaiterID())
        #expect(pool.openFailed() == 7)
        #expect(pool.opened == 1, "the slot stays reserved for the waiter")
        #expect(pool.openFailed() == nil)
        #expect(pool.opened == 0)
    }

    @Test("a cancelled waiter leaves the queue; shutdown closes idle connections, fails waiters and closes the rest on return")
    func poolCancelAndShutdown() {
        var pool = Pool(size: 2)
        _ = pool.lease()
        _ = pool.lease()
        let first = pool.nextWaiterID()
        pool.enqueue(1, id: first)
        pool.enqueue(2, id: pool.nextWaiterID())
        #expect(pool.cancel(id: first) == 1)
        #expect(pool.cancel(id: first) == nil)
        guard case .hand(_, to: 2) = pool.giveBack("a") else {
            Issue.record("the remaining waiter is served")
            return
        }
        _ = pool.giveBack("a")
        let (idle, waiters) = pool.shutdown()
        #expect(idle == ["a"] && waiters.isEmpty && pool.opened == 1)
        guard case .close("b") = pool.giveBack("b"), case .shutDown = pool.lease() else {
            Issue.record("a connection returned after shutdown is closed, and no lease is granted")
            return
        }
        #expect(pool.opened == 0)
    }
}

import CHiredis
import Dispatch
import Foundation
import Synchronization
import Testing

@testable import HeraldRedis

/// The hand-over between a cluster stream's reading threads (one per master) and the caller.
/// A reading thread frees its replies once `hand` returns, so it must never return while the
/// caller reads the reply it handed, even when another master's stream fails meanwhile.
@Suite("Cluster stream hand-over")
struct ReplyExchangeTests {
    /// A nil reply to hand around (only its address matters here).
    final class Reply {
        let pointer = UnsafeMutablePointer<redisReply>.allocate(capacity: 1)
        init() { pointer.initialize(to: redisReply()) }
        deinit { pointer.deallocate() }
        var reference: Handed { Handed(reply: RedisReplyReference(pointer)) }
    }

    /// A reply crossing to the reading thread, as the router's streams hand them.
    struct Handed: @unchecked Sendable {
        let reply: RedisReplyReference
    }

    /// A reading thread handing `reply`: `started` is signalled just before it hands, `returned`
    /// once `hand` has returned ("returned") or thrown ("threw"), as `outcome` then says.
    final class ReadingThread: Sendable {
        let started = DispatchSemaphore(value: 0)
        let returned = DispatchSemaphore(value: 0)
        let outcome = Mutex<String?>(nil)

        init(handing reply: Reply, to exchange: ReplyExchange) {
            let handed = reply.reference
            DispatchQueue.global().async { [self] in
                started.signal()
                do {
                    try exchange.hand(0, handed.reply)
                    outcome.withLock { $0 = "returned" }
                } catch {
                    outcome.withLock { $0 = "threw" }
                }
                returned.signal()
            }
        }

        var result: String? { outcome.withLock { $0 } }
    }

    @Test("another stream failing while the caller reads a reply: that reply's thread waits until it is handled")
    func failureElsewhereWaitsForTheReplyInHand() throws {
        let exchange = ReplyExchange(streams: 2)
        let reply = Reply()
        let thread = ReadingThread(handing: reply, to: exchange)
        let taken = try #require(exchange.next())
        #expect(taken.0 == 0)
        exchange.finished(RedisError(code: .connection, message: "the other master went away"))
        // With the reply in the caller's hands, its thread must still be waiting.
        let early = thread.returned.wait(timeout: .now() + .milliseconds(200)) == .success
        #expect(!early, "the reading thread went on (and would free the reply) while the caller held it")
        #expect(thread.result == nil)
        exchange.handled()
        if !early { thread.returned.wait() }
        #expect(thread.result == "returned")
        #expect(exchange.next().map { _ in true } == nil)
        #expect(exchange.failure != nil)
    }

    @Test("a reply the caller has not taken when another stream fails is withdrawn, and the caller never sees it")
    func untakenReplyIsWithdrawn() throws {
        let exchange = ReplyExchange(streams: 2)
        let reply = Reply()
        let thread = ReadingThread(handing: reply, to: exchange)
        thread.started.wait()
        exchange.finished(RedisError(code: .connection, message: "the other master went away"))
        thread.returned.wait()
        // Either it was offered before the failure and withdrawn, or refused: never handed.
        #expect(thread.result == "threw")
        #expect(exchange.next().map { _ in true } == nil)
    }
}

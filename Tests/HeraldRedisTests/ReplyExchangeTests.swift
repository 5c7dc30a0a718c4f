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

    @Test("another stream failing while the caller reads a reply: that reply's thread waits until it is handled")
    func failureElsewhereWaitsForTheReplyInHand() throws {
        let exchange = ReplyExchange(streams: 2)
        let reply = Reply()
        let returned = DispatchSemaphore(value: 0)
        let outcome = Mutex<String?>(nil)
        let reference = reply.reference
        DispatchQueue.global().async {
            do {
                try exchange.hand(0, reference.reply)
                outcome.withLock { $0 = "returned" }
            } catch {
                outcome.withLock { $0 = "threw" }
            }
            returned.signal()
        }
        let taken = try #require(exchange.next())
        #expect(taken.0 == 0)
        exchange.finished(RedisError(code: .connection, message: "the other master went away"))
        // With the reply in the caller's hands, its thread must still be waiting.
        let early = returned.wait(timeout: .now() + .milliseconds(200)) == .success
        #expect(!early, "the reading thread went on (and would free the reply) while the caller held it")
        #expect(outcome.withLock { $0 } == nil)
        exchange.handled()
        if !early { returned.wait() }
        #expect(outcome.withLock { $0 } == "returned")
        #expect(exchange.next().map { _ in true } == nil)
        #expect(exchange.failure != nil)
    }

    @Test("a reply the caller has not taken when another stream fails is withdrawn, and the caller never sees it")
    func untakenReplyIsWithdrawn() throws {
        let exchange = ReplyExchange(streams: 2)
        let reply = Reply()
        let returned = DispatchSemaphore(value: 0)
        let outcome = Mutex<String?>(nil)
        let reference = reply.reference
        let offered = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            do {
                offered.signal()
                try exchange.hand(0, reference.reply)
                outcome.withLock { $0 = "returned" }
            } catch {
                outcome.withLock { $0 = "threw" }
            }
            returned.signal()
        }
        offered.wait()
        exchange.finished(RedisError(code: .connection, message: "the other master went away"))
        returned.wait()
        // Either it was offered before the failure and withdrawn, or refused: never handed.
        #expect(outcome.withLock { $0 } == "threw")
        #expect(exchange.next().map { _ in true } == nil)
    }
}

import Foundation
import HTTPTypes
import HeraldDomain
import HummingbirdTesting
import Testing

@testable import HeraldAPI

@Suite("Rate limits")
struct RateLimitTests {
    let start = Date(timeIntervalSince1970: 1_800_000_000)
    let listen = Caller.policy(name: "DefaultListenSharedAccessSignature", rights: [.listen])
    let send = Caller.policy(name: "Newsroom", rights: [.send])

    func refusal(_ body: () throws(APIError) -> Void) -> APIError? {
        do {
            try body()
            return nil
        } catch {
            return error
        }
    }

    @Test("a caller gets its burst, then 429 with the seconds until a token is back; a refusal takes no token")
    func callerBucket() throws {
        let limiter = RequestRateLimiter(limits: RateLimits(perCaller: 10, perHub: 1_000, burstSeconds: 2))
        for _ in 0..<20 { #expect(refusal { () throws(APIError) in try limiter.admit(caller: listen, hub: .default, now: start) } == nil) }
        let refused = try #require(refusal { () throws(APIError) in try limiter.admit(caller: listen, hub: .default, now: start) })
        #expect(refused.status == .tooManyRequests && refused.code == "rate_limited")
        #expect(refused.headers[.retryAfter] == "1")
        #expect(refused.message.contains("policy \"DefaultListenSharedAccessSignature\"'s 10 requests a second"), "\(refused.message)")
        // Another caller of the same hub is not held back.
        #expect(refusal { () throws(APIError) in try limiter.admit(caller: send, hub: .default, now: start) } == nil)
        // A tenth of a second later: one token back, one request, then refused again.
        let later = start.addingTimeInterval(0.1)
        #expect(refusal { () throws(APIError) in try limiter.admit(caller: listen, hub: .default, now: later) } == nil)
        #expect(refusal { () throws(APIError) in try limiter.admit(caller: listen, hub: .default, now: later) } != nil)
        // The same policy name in another hub has a bucket of its own.
        #expect(refusal { () throws(APIError) in try limiter.admit(caller: listen, hub: HubName("sports")!, now: later) } == nil)
    }

    @Test("a hub's callers share its limit; other hubs are untouched")
    func hubBucket() throws {
        let limiter = RequestRateLimiter(limits: RateLimits(perCaller: 100, perHub: 5, burstSeconds: 1))
        let sports = HubName("sports")!
        for index in 0..<5 {
            let user = Caller.user(id: "u\(index)")
            #expect(refusal { () throws(APIError) in try limiter.admit(caller: user, hub: sports, now: start) } == nil)
        }
        let refused = try #require(refusal { () throws(APIError) in try limiter.admit(caller: send, hub: sports, now: start) })
        #expect(refused.message.contains("hub \"sports\"'s 5 registration requests a second"), "\(refused.message)")
        #expect(refusal { () throws(APIError) in try limiter.admit(caller: send, hub: .default, now: start) } == nil)
    }

    @Test("a flood of registrations leaves the hub's sends their own bucket")
    func sendsHaveTheirOwnBucket() throws {
        let limiter = RequestRateLimiter(limits: RateLimits(perCaller: 1_000_000, perHub: 5, burstSeconds: 1))
        let sports = HubName("sports")!
        for index in 0..<5 {
            #expect(
                refusal { () throws(APIError) in try limiter.admit(caller: .user(id: "u\(index)"), hub: sports, lane: .registry, now: start)
                } == nil)
        }
        #expect(refusal { () throws(APIError) in try limiter.admit(caller: listen, hub: sports, lane: .registry, now: start) } != nil)
        for _ in 0..<5 {
            #expect(refusal { () throws(APIError) in try limiter.admit(caller: send, hub: sports, lane: .sends, now: start) } == nil)
        }
        let refused = try #require(
            refusal { () throws(APIError) in try limiter.admit(caller: send, hub: sports, lane: .sends, now: start) })
        #expect(refused.message.contains("hub \"sports\"'s 5 send requests a second"), "\(refused.message)")
    }

    @Test(
        "requests take the lane of the route's first segment after the hub",
        arguments: [
            ("/v1/notifications", RequestLane.sends), ("/v1/notifications/ev-1", .sends), ("/v1/hubs/sports/notifications", .sends),
            ("/sports/messages/", .sends), ("/sports/schedulednotifications/", .sends), ("/sports/notifications/ev-1", .sends),
            ("/v1/registrations/r-1", .registry), ("/v1/hubs/notifications/registrations", .registry),
            ("/messages/registrations/", .registry), ("/v1/installations/i", .registry), ("/sports/installations/i", .registry),
        ])
    func lanes(path: String, lane: RequestLane) {
        #expect(RequestLane.of(path: path) == lane, "\(path)")
    }

    @Test("idle buckets are forgotten once there are too many")
    func boundedBuckets() {
        let limiter = RequestRateLimiter(limits: RateLimits(perCaller: 1, perHub: 1_000_000, burstSeconds: 1), maxBuckets: 100)
        for index in 0..<1_000 {
            _ = refusal { () throws(APIError) in
                try limiter.admit(caller: .user(id: "u\(index)"), hub: .default, now: start.addingTimeInterval(Double(index) * 0.01))
            }
        }
        #expect(limiter.bucketCount <= 202)
    }

    @Test("over the limit the API answers 429 with Retry-After and a JSON body")
    func throughTheAPI() async throws {
        var hub = TestHub()
        // Three requests, then one every 1,000 s: however slow the machine, the fourth is refused.
        hub.rateLimits = RateLimits(perCaller: 0.001, perHub: 100, burstSeconds: 3_000)
        try await hub.run { client async throws in
            let started = ContinuousClock.now
            for _ in 0..<3 {
                #expect(try await client.call(.post, "/v1/registrationIDs", TestHub.sas("listen")).status == .created)
            }
            let response = try await client.call(.post, "/v1/registrationIDs", TestHub.sas("listen"))
            let elapsed = Double((ContinuousClock.now - started).components.seconds)
            #expect(response.status == .tooManyRequests)
            #expect(response.errorCode == "rate_limited")
            // The next token is 1,000 s after the first request, less what refilled while the
            // requests ran (a loaded machine took 19 s for these four).
            let retryAfter = Int(response.headers[.retryAfter] ?? "")
            #expect(retryAfter.map { $0 <= 1_000 && Double($0) >= 1_000 - elapsed - 1 } == true, "\(response.headers), \(elapsed) s")
        }
    }
}

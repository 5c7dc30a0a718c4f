import Dispatch
import Foundation
import Testing
@testable import HeraldKafka

@Suite("Blocking librdkafka calls")
struct BlockingCallQueueTests {
    /// Each client's blocking calls (a commit that waits for a slow broker) must not hold up
    /// other clients'. On Linux, concurrent dispatch queues share one thread per CPU and get
    /// more only from a monitor that runs about once a second, so with more blocked calls than
    /// CPUs the last ones start seconds late; the queues of `blockingCallQueue` must start
    /// them all at once. Every call here waits until all of them are running.
    @Test("more blocked calls than CPUs all run at once, on separate clients' queues")
    func blockedCallsDoNotWaitForThreads() async throws {
        let calls = ProcessInfo.processInfo.activeProcessorCount + 3
        let started = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let finished = DispatchGroup()
        for index in 0..<calls {
            finished.enter()
            blockingCallQueue("test.blocking.\(index)").async {
                started.signal()
                release.wait()  // blocked, like a commit waiting for the broker
                finished.leave()
            }
        }
        // Concurrent queues would start the last call 2 s or more after the first.
        let deadline = DispatchTime.now() + .milliseconds(1_500)
        var running = 0
        while running < calls, started.wait(timeout: deadline) == .success { running += 1 }
        for _ in 0..<calls { release.signal() }
        finished.wait()
        #expect(running == calls, "only \(running) of \(calls) blocked calls were running within 1.5 s")
    }
}

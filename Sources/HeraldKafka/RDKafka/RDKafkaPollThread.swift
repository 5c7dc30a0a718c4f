import CRdKafka
import Foundation
import Synchronization

/// A dedicated thread that serves a client's callbacks (delivery reports, errors) by calling
/// `rd_kafka_poll` in a loop. It is a plain thread because the call blocks, and blocking a
/// thread of Swift's cooperative pool would starve unrelated tasks.
final class RDKafkaPollThread: Sendable {
    private let stopRequested = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)

    init(client: RDKafkaClient, name: String, intervalMs: Int32 = 100) {
        let thread = Thread { [self] in
            while !self.stopRequested.load(ordering: .acquiring) {
                client.poll(timeoutMs: intervalMs)
            }
            self.finished.signal()
        }
        thread.name = name
        thread.start()
    }

    /// Stops the loop and waits for the thread to leave it (at most one poll interval).
    func stop() {
        let (exchanged, _) = stopRequested.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing)
        if exchanged { finished.wait() }
    }
}

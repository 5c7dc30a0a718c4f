import Foundation
import Synchronization

/// Lets bulk lanes step aside while an express lane works, so on a small machine a one-user
/// event does not share the CPU with a broadcast. A bulk lane checks between pages of
/// recipients and waits (bounded) while express work is in flight in this process.
final class ExpressGate: Sendable {
    static let shared = ExpressGate()

    private let inFlight = Atomic<Int>(0)

    func enter() { inFlight.add(1, ordering: .relaxed) }
    func leave() { inFlight.subtract(1, ordering: .relaxed) }

    var isBusy: Bool { inFlight.load(ordering: .relaxed) > 0 }

    /// Waits while express work is in flight, at most `limit`.
    func yieldIfBusy(limit: Duration = .milliseconds(50)) {
        guard isBusy else { return }
        let deadline = ContinuousClock.now + limit
        while isBusy && ContinuousClock.now < deadline { usleep(200) }
    }
}

import Dispatch
import Foundation
import Logging
import ServiceLifecycle

/// Ends the process when a graceful shutdown overruns: SIGTERM must always end a worker, even
/// when a thread is stuck inside a call that ignores cancellation (librdkafka's, Redis's).
///
/// The service group escalates a shutdown that passes `drain` to cancellation; this waits
/// `grace` more, then logs one line and exits with status 2. The timer runs on a Dispatch
/// queue, so a starved cooperative pool cannot delay it.
struct ShutdownDeadline: Service {
    let drain: Duration
    let grace: Duration
    let logger: Logger

    func run() async throws {
        do {
            try await gracefulShutdown()
        } catch {
            return  // cancelled without a graceful shutdown: whoever cancelled is in charge
        }
        let limit = drain + grace
        let (seconds, attoseconds) = limit.components
        let logger = logger
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)))
        {
            logger.critical(
                "shutdown did not finish within HERALD_DRAIN_SECONDS plus the grace; exiting now",
                metadata: ["limit": "\(limit)", "grace": "\(grace)"])
            exit(2)
        }
    }
}

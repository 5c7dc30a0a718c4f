import Foundation
import HeraldLocalPush
import HeraldTestSupport

/// A private Redis, a broker, the local APNs and FCM servers, and the `herald` processes a
/// suite starts on them, all stopped when the suite is done: the stack of the suites that run
/// the sender role on the real processes.
final class LocalPushStack: @unchecked Sendable {
    let redis: TestRedis
    let broker: TestBroker
    let push: LocalPushServices
    /// The API's address, on a free loopback port.
    let base: URL
    private(set) var processes: [HeraldBinary.Running] = []

    init() async throws {
        redis = try TestRedis()
        broker = try TestBroker()
        push = try await LocalPushServices.start()
        base = URL(string: "http://127.0.0.1:\(freeLocalPort())/")!
    }

    deinit {
        for process in processes {
            process.signal(SIGTERM)
            _ = process.waitForExit(timeout: 20)
        }
        broker.stop()
        redis.stop()
        // Not waited for: a deinit runs on a thread of the cooperative pool, and two suites'
        // deinits each blocking it while their shutdown task waited for a free thread of it
        // deadlocked the main pass on two cores.
        let push = push
        Task { await push.shutdown() }
    }

    /// Starts `herald <arguments>`, stopped with the stack.
    @discardableResult
    func start(_ arguments: [String], environment: [String: String]) throws -> HeraldBinary.Running {
        let process = try HeraldBinary.start(arguments, environment: environment)
        processes.append(process)
        return process
    }
}

import Foundation
import HeraldRedis

/// The planner's part of a breaking alert's signal to the deployment's registration writers
/// (`AlertYield`): from the moment it reads the alert, so the writes step aside while the alert
/// is planned and handed to the express lanes, not only once those run its tasks
/// (`TaskDelivery` keeps the signal up from there). Its field of `SlotLayout.breakingKey` is
/// `<instance id>/planner`.
extension EventPlanner {
    /// Holds the signal `breakingSignalMilliseconds` ahead. A failure is logged; the alert goes
    /// on without it.
    func signalBreaking() async {
        let milliseconds = configuration.breakingSignalMilliseconds
        guard milliseconds > 0 else { return }
        let key = configuration.layout.breakingKey
        do {
            for reply in try await redis.pipeline([
                RedisCommand("HSET", key, breakingSignalField, String(BreakingSignal.until(after: milliseconds))),
                RedisCommand("PEXPIRE", key, String(milliseconds)),
            ]) {
                _ = try reply.get()
            }
        } catch {
            logger.warning("could not signal a breaking alert to registration writers", metadata: ["error": "\(error)"])
        }
    }

    /// Cuts the signal to `breakingSignalLingerMilliseconds` once the batch is planned: long
    /// enough for an express lane to take the alert's tasks and hold the signal itself.
    func endBreakingSignal() async {
        let until = BreakingSignal.until(after: configuration.breakingSignalLingerMilliseconds)
        do {
            _ = try await redis.send(RedisCommand("HSET", configuration.layout.breakingKey, breakingSignalField, String(until)))
        } catch {
            logger.warning("could not end the breaking alert's signal; it ends on its own", metadata: ["error": "\(error)"])
        }
    }

    var breakingSignalField: String { configuration.instanceId + "/planner" }
}

/// The values of a breaking alert's signal (`SlotLayout.breakingKey`).
enum BreakingSignal {
    /// When a signal held `milliseconds` from now ends, as `AlertYield` compares it: milliseconds
    /// since 1970.
    static func until(after milliseconds: Int) -> Int64 {
        Int64(Date().timeIntervalSince1970 * 1_000) + Int64(max(0, milliseconds))
    }
}

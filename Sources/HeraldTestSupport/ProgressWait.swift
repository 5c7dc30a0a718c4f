import Foundation

/// What one look at a condition found: done with a result, or not yet, with a value that
/// changes whenever the work advances (a count, a state, an offset).
public enum ProgressCheck<Progress: Equatable, Result> {
    case done(Result)
    case waiting(Progress)
}

/// Nothing progressed for the wait's stall limit.
public struct StalledWait: Error, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}

/// Looks at a condition every `interval` until it is done. Fails only when the reported progress
/// stays the same for `stallLimit`: a slow machine makes the wait longer, never red.
public func waitWhileProgressing<Progress: Equatable, Result>(
    _ what: @autoclosure () -> String,
    stallLimit: Duration = .seconds(120),
    interval: Duration = .milliseconds(50),
    check: () async throws -> ProgressCheck<Progress, Result>
) async throws -> Result {
    let clock = ContinuousClock()
    var last: Progress?
    var lastChange = clock.now
    while true {
        switch try await check() {
        case .done(let result):
            return result
        case .waiting(let progress):
            if progress != last {
                last = progress
                lastChange = clock.now
            } else if clock.now - lastChange > stallLimit {
                throw StalledWait(message: "\(what()): no progress for \(stallLimit) (stuck at \(progress))")
            }
        }
        try await Task.sleep(for: interval)
    }
}

/// Waits until `condition` holds. For conditions without a measure of progress (a server
/// starting, a process exiting): fails after `limit`, which is meant to be generous.
public func waitUntilTrue(
    _ what: @autoclosure () -> String,
    limit: Duration = .seconds(120),
    interval: Duration = .milliseconds(50),
    condition: () async throws -> Bool
) async throws {
    let _: Void = try await waitWhileProgressing(what(), stallLimit: limit, interval: interval) {
        try await condition() ? .done(()) : .waiting(0)
    }
}

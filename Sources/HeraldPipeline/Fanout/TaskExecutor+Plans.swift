import Foundation
import HeraldDomain
import HeraldRedis
import HeraldRegistry

/// How the fan-out found one slot's audience; the status record counts slots by plan.
public enum FanoutPlanKind: String, Sendable, Hashable, CaseIterable {
    /// No expression: every registration, streamed from the slot's view packs.
    case broadcast
    /// The slot's view packs streamed as for a broadcast, each registration tested against the
    /// compiled expression (`TagMatcher`) on the tags its view carries.
    case scan
    /// The expression resolved inside Redis (`TagSetPlan`: set operations into scratch sets),
    /// the members read with SSCAN and their views fetched pack by pack.
    case sets
}

/// `HERALD_FANOUT_PLAN`: choose per slot, or force one plan.
public enum FanoutPlanMode: String, Sendable, Hashable, CaseIterable {
    case auto
    case scan
    case sets
}

/// Choosing each slot's plan from cheap statistics: one pipeline of `SCARD`s per task (the
/// slot's registrations and, in `auto`, each of the expression's tags).
extension TaskExecutor {
    struct SlotChoice: Equatable {
        var slot: Int
        var registrations: Int
        var plan: FanoutPlanKind
    }

    /// Expressions with more distinct tags than this are not estimated: their slots are
    /// scanned when the expression can select registrations without any of its tags, else
    /// resolved with set operations.
    static let estimatedTagLimit = 32

    /// The plan of every non-empty slot of `slots` for `expression`.
    func choosePlans(slots: Range<Int>, expression: TagExpression, plan setPlan: TagSetPlan?, tags: [String]) throws -> [SlotChoice] {
        let layout = configuration.layout
        let mode = configuration.fanoutPlan
        let estimated = mode == .auto && tags.count <= Self.estimatedTagLimit ? tags : []
        var commands: [RedisCommand] = []
        for slot in slots {
            commands.append(.scard(layout.allKey(slot: slot)))
            for tag in estimated { commands.append(.scard(layout.tagKey(slot: slot, tag: tag))) }
        }
        let counts: [Int] = try redis.withPipelineRepliesBlocking(commands) { replies in
            try zip(commands, replies).map { command, reply in
                if let error = redis.error(in: reply, of: command) { throw error }
                return reply.integer ?? 0
            }
        }
        let stride = 1 + estimated.count
        var choices: [SlotChoice] = []
        for (position, slot) in slots.enumerated() {
            let base = position * stride
            let registrations = counts[base]
            guard registrations > 0 else { continue }
            let plan: FanoutPlanKind
            switch mode {
            case .scan: plan = .scan
            case .sets: plan = .sets
            case .auto:
                if estimated.isEmpty || setPlan == nil {
                    plan = expression.matchesWithoutTags ? .scan : .sets
                } else {
                    let reads = setPlan!.estimatedReads(registrations: registrations) { tag in
                        guard let index = estimated.firstIndex(of: tag) else { return registrations }
                        return counts[base + 1 + index]
                    }
                    plan = reads * 100 >= Double(configuration.scanAbovePercent * registrations) ? .scan : .sets
                }
            }
            choices.append(SlotChoice(slot: slot, registrations: registrations, plan: plan))
        }
        return choices
    }
}

import Foundation
import HeraldDomain
import HeraldKafka
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
    /// The expression evaluated on the slot's tag bitmaps, 64 positions at a time
    /// (`TagMatcher.matchingWords`), and only the packs holding a match read.
    case bits
    /// A test send: the registrations it names, their installations' and users' sets, read
    /// slot by slot and their views fetched pack by pack.
    case test
    /// A correction: the registrations the corrected event reached, read from its records on
    /// `herald.deliveries` (`CorrectionAudience`), their views fetched pack by pack.
    case correction
    /// A direct send: the handles the event names, no slot read (`DirectTarget`).
    case direct
}

/// `HERALD_FANOUT_PLAN`: choose per slot, or force one plan.
public enum FanoutPlanMode: String, Sendable, Hashable, CaseIterable {
    case auto
    case scan
    case sets
    /// `bits` wherever every tag of the expression has a bitmap in the slot, else `scan`.
    case bits
}

/// Choosing each slot's plan: a task of many slots tries `bits` everywhere first (one `MGET` per
/// slot reads the expression's tags' bitmaps and shows where they all have one); the others are
/// chosen from cheap statistics, one pipeline of `SCARD`s (the slot's registrations and, in
/// `auto`, each of the expression's tags).
extension TaskExecutor {
    /// Delivers an expression's audience in `slots`, each slot by its plan, and counts the
    /// slots by plan in `run`.
    func deliver(
        _ expression: TagExpression, setPlan: TagSetPlan, slots: Range<Int>, scratch: String, run: inout TaskRun,
        producer: KafkaProducer
    ) throws {
        let mode = configuration.fanoutPlan
        let bitmapsFirst =
            (mode == .auto || mode == .bits) && slots.count > configuration.planner.narrowSlotLimit
            && expression.referencedTags.count <= Self.estimatedTagLimit
        // Compiled only for `bits` and `scan`: a one-user event (always `sets`) skips its truth table.
        var matcher: TagMatcher?
        var rest = Array(slots)
        if bitmapsFirst {
            let compiled = TagMatcher(expression)
            matcher = compiled
            let outcome = try deliverBitmaps(slots: rest, matcher: compiled, run: &run, producer: producer)
            run.plans[FanoutPlanKind.bits.rawValue, default: 0] += outcome.delivered.count
            rest = outcome.unmapped
        }
        guard !rest.isEmpty else { return }
        var choices = try choosePlans(slots: rest, expression: expression, setPlan: setPlan)
        if matcher == nil, choices.contains(where: { $0.plan != .sets }) { matcher = TagMatcher(expression) }
        let bitmapped = choices.filter { $0.plan == .bits }.map(\.slot)
        if let matcher, !bitmapped.isEmpty {
            // After `bitmapsFirst` these slots had a tag without a bitmap a moment ago: scan them.
            let unmapped =
                bitmapsFirst ? bitmapped : try deliverBitmaps(slots: bitmapped, matcher: matcher, run: &run, producer: producer).unmapped
            for index in choices.indices where unmapped.contains(choices[index].slot) { choices[index].plan = .scan }
        }
        let scanned = choices.filter { $0.plan == .scan }
        if let matcher, !scanned.isEmpty {
            try deliverEverything(
                slots: scanned.map { ($0.slot, $0.registrations) }, filter: .tags(matcher), run: &run, producer: producer)
        }
        for choice in choices where choice.plan == .sets {
            try deliver(slot: choice.slot, scratch: scratch, run: &run, producer: producer)
        }
        for choice in choices { run.plans[choice.plan.rawValue, default: 0] += 1 }
    }

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
    ///
    /// In `auto`, a slot where every tag of the expression is on no registration or on at least
    /// `SlotLayout.bitmapThreshold` (so has a bitmap) takes `bits`: it reads only the packs
    /// holding the audience, and neither tests views nor combines sets. Elsewhere (a tag on a
    /// few registrations, such as one user's) the set plan's estimated reads decide between
    /// `sets` and `scan`.
    func choosePlans(slots: [Int], expression: TagExpression, setPlan: TagSetPlan) throws -> [SlotChoice] {
        let mode = configuration.fanoutPlan
        let tags = expression.referencedTags.sorted()
        let sized = mode == .auto || mode == .bits
        let estimated = sized && tags.count <= Self.estimatedTagLimit ? tags : []
        let commands = SlotTagSizes.commands(layout: layout, slots: slots, tags: estimated)
        let counts: [Int] = try redis.withPipelineRepliesBlocking(commands) { replies in
            try zip(commands, replies).map { command, reply in
                if let error = redis.error(in: reply, of: command) { throw error }
                return reply.integer ?? 0
            }
        }
        let sizes = SlotTagSizes(tags: estimated, counts: counts)
        var choices: [SlotChoice] = []
        for (position, slot) in slots.enumerated() {
            let registrations = sizes.registrations(at: position)
            guard registrations > 0 else { continue }
            let bitmapped =
                !estimated.isEmpty
                && estimated.allSatisfy {
                    let count = sizes.count($0, at: position)
                    return count == 0 || count >= SlotLayout.bitmapThreshold
                }
            let plan: FanoutPlanKind
            switch mode {
            case .scan: plan = .scan
            case .sets: plan = .sets
            case .bits: plan = bitmapped ? .bits : .scan
            case .auto:
                if bitmapped {
                    plan = .bits
                } else if estimated.isEmpty {
                    plan = expression.matchesWithoutTags ? .scan : .sets
                } else {
                    let reads = setPlan.estimatedReads(registrations: registrations) { sizes.count($0, at: position) }
                    plan = reads * 100 >= Double(configuration.scanAbovePercent * registrations) ? .scan : .sets
                }
            }
            choices.append(SlotChoice(slot: slot, registrations: registrations, plan: plan))
        }
        return choices
    }
}

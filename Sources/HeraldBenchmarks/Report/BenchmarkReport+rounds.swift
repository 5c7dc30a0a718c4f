extension BenchmarkReport {
    /// Broadcasts of the main population, each measured between a ceiling right before it and
    /// one right after it: n broadcasts, n + 1 ceilings, alternating; with
    /// `BenchmarkOptions.roundExpressions`, each broadcast is followed by a ceiling and the
    /// expression (2n fan-outs, 2n + 1 ceilings).
    ///
    /// The two ceilings of the run's first and last phase (`ceiling`, `ceilingAfter`) lie
    /// minutes apart from the broadcast they judge, and on a shared host one ceiling moves by up
    /// to 1.8 x within a run (docs/performance.md, "Why single runs differ"). A ceiling seconds away from
    /// its broadcast ran at nearly the same host speed, and several such pairs show the spread
    /// instead of one draw from it. Each broadcast is divided by the better of its two
    /// neighbours, as the main broadcast is by the better of the run's two ceilings.
    public struct Rounds: Sendable, Codable, Hashable {
        /// In the order measured: `ceilings[i]` right before `fanouts[i]`, `ceilings[i + 1]`
        /// right after it. Transactional only, with the fan-out's clock.
        public var ceilings: [Ceiling]
        /// Each with `ratioToCeiling` against its neighbours (`applyNeighbours()`).
        public var fanouts: [Fanout]

        public init(ceilings: [Ceiling] = [], fanouts: [Fanout] = []) {
            self.ceilings = ceilings
            self.fanouts = fanouts
        }

        /// The better of the two ceilings around fan-out `index`, nil until both were measured.
        public func neighbourReference(_ index: Int) -> Double? {
            guard index >= 0, index + 1 < ceilings.count else { return nil }
            return Swift.max(ceilings[index].referencePerSecond, ceilings[index + 1].referencePerSecond)
        }

        /// Sets every fan-out's `ratioToCeiling` against `neighbourReference`.
        public mutating func applyNeighbours() {
            for index in fanouts.indices {
                fanouts[index].ratioToCeiling = neighbourReference(index).map { fanouts[index].deliveriesPerSecond / $0 }
            }
        }

        /// Whether `fanout` is one of the rounds' broadcasts (else the rounds' expression).
        public static func isBroadcast(_ fanout: Fanout) -> Bool { fanout.audience == "broadcast" }

        /// The broadcasts' ratios, of those that have both neighbours, in order.
        public var ratios: [Double] { fanouts.filter(Self.isBroadcast).compactMap(\.ratioToCeiling) }

        /// The median of `ratios` (the mean of the middle two for an even count); nil without any.
        public var medianRatio: Double? { Self.median(ratios) }

        /// The expressions' ratios to their neighbouring ceilings (`roundExpressions`), in order.
        public var expressionRatios: [Double] { fanouts.filter { !Self.isBroadcast($0) }.compactMap(\.ratioToCeiling) }

        public var expressionMedianRatio: Double? { Self.median(expressionRatios) }

        /// Each expression's time per delivery over that of the broadcast right before it.
        public var expressionCosts: [Double] {
            fanouts.indices.dropFirst().compactMap { index in
                let expression = fanouts[index]
                let broadcast = fanouts[index - 1]
                guard !Self.isBroadcast(expression), Self.isBroadcast(broadcast), expression.deliveriesPerSecond > 0 else { return nil }
                return broadcast.deliveriesPerSecond / expression.deliveriesPerSecond
            }
        }

        public var expressionMedianCost: Double? { Self.median(expressionCosts) }

        /// The middle value, or the mean of the middle two; nil for none.
        static func median(_ values: [Double]) -> Double? {
            let sorted = values.sorted()
            guard !sorted.isEmpty else { return nil }
            let middle = sorted.count / 2
            return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
        }
    }
}

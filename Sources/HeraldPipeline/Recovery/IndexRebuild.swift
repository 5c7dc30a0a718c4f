import Foundation
import HeraldKafka
import HeraldRegistry
import Logging

/// Rebuilds everything Herald keeps in Redis from Kafka, under the rebuild lease of
/// `IndexEpoch`: the registration index from `herald.registrations` (`Reindexer`), then
/// statuses, claims and the progress of events in flight from `herald.status`
/// (`StatusRebuilder`), and last the epoch that lets the planner and the fan-out read again.
///
/// `herald reindex` runs it, and so does a worker with the indexer role when it finds the
/// epoch missing (`IndexKeeper`). Running it on a whole index changes nothing that is right:
/// every write is version-checked or only fills gaps, and the existing epoch is kept.
public struct IndexRebuild: Sendable {
    public struct Summary: Sendable, Hashable {
        public var registrations: Reindexer.Summary
        public var statuses: StatusRebuilder.Summary
        /// The index's epoch afterwards.
        public var epoch: String
    }

    public let reindexer: Reindexer
    public let statuses: StatusRebuilder
    /// How long the lease lasts without renewal; it is renewed every third of it.
    public var lease: Duration = .seconds(30)

    public init(reindexer: Reindexer, statuses: StatusRebuilder) {
        self.reindexer = reindexer
        self.statuses = statuses
    }

    /// Rebuilds under the lease named `token`; nil, without doing anything, when another
    /// process holds the lease. Throws `IndexNotReady` when Redis lost its data again
    /// during the rebuild.
    public func run(
        token: String, logger: Logger, progress: @escaping @Sendable (Reindexer.Progress) -> Void = { _ in }
    ) async throws -> Summary? {
        let index = reindexer.index
        try await index.checkMeta()
        guard try await index.takeRebuildLease(token: token, lease: lease) else { return nil }
        let lease = self.lease
        let renewal = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: lease / 3)
                if Task.isCancelled { break }
                if (try? await index.renewRebuildLease(token: token, lease: lease)) == false {
                    logger.warning("the index rebuild lost its lease (Redis emptied again?); it will not mark the index whole")
                    break
                }
            }
        }
        defer { renewal.cancel() }
        let registrations = try await reindexer.run(progress: progress)
        let statuses = try await statuses.run(logger: logger)
        let epoch = try await index.finishRebuild(token: token)
        return Summary(registrations: registrations, statuses: statuses, epoch: epoch)
    }
}

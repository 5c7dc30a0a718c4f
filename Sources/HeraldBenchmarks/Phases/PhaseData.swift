import HeraldKafka
import HeraldPipeline
import Logging

/// Removes a phase's topics and Redis keys at its end, unless `--keep-data` asked to keep them.
enum PhaseData {
    /// `extraTopics`: the phase's topics beyond the pipeline's (the registrations topic that a
    /// worker's indexer and the API create for themselves).
    static func remove(
        names: BenchmarkNames, configuration: PipelineConfiguration, options: BenchmarkOptions, logger: Logger, extraTopics: [String] = []
    ) async {
        guard !options.keepData else {
            Console.say("  keeping topics \(names.topicPrefix)* and Redis keys \(names.redisPrefix):* (--keep-data)")
            return
        }
        var adminConfiguration = KafkaAdminConfiguration(bootstrapServers: configuration.bootstrapServers)
        adminConfiguration.extra = configuration.kafkaExtra
        if let admin = try? KafkaAdmin(configuration: adminConfiguration, logger: logger) {
            do { try await admin.deleteTopics(configuration.topics.all.map(\.name) + extraTopics, ignoreMissing: true) } catch {
                logger.warning("deleting topics failed", metadata: ["error": "\(error)"])
            }
        }
        do { try await RedisKeyspace.deleteAll(prefix: names.redisPrefix, redis: configuration.redis) } catch {
            logger.warning("removing Redis keys failed", metadata: ["pattern": "\(names.redisPrefix):*", "error": "\(error)"])
        }
    }
}

import ArgumentParser
import HeraldApp

/// Every Herald setting as an optional flag; unset flags fall back to `HERALD_*` environment
/// variables, then the embedded stack's endpoints file, then the defaults (see `herald config`).
struct SettingsOptions: ParsableArguments {
    @Option(help: "Kafka bootstrap servers (HERALD_KAFKA_BROKERS).") var kafkaBrokers: String?
    @Option(help: "Redis URL (HERALD_REDIS_URL).") var redisUrl: String?
    @Option(help: "Redis connections per process (HERALD_REDIS_POOL_SIZE).") var redisPoolSize: String?
    @Option(help: "Registration slots (HERALD_SLOTS).") var slots: String?
    @Option(help: "Redis key prefix (HERALD_REDIS_PREFIX).") var redisPrefix: String?
    @Option(help: "Kafka topic prefix (HERALD_TOPIC_PREFIX).") var topicPrefix: String?
    @Option(help: "Stable instance name (HERALD_INSTANCE_ID).") var instanceId: String?
    @Option(help: "Consumer session timeout in ms (HERALD_SESSION_TIMEOUT_MS).") var sessionTimeoutMs: String?
    @Option(help: "Producer linger in ms (HERALD_LINGER_MS).") var lingerMs: String?
    @Option(help: "Producer compression (HERALD_COMPRESSION).") var compression: String?
    @Option(help: "Log level (HERALD_LOG_LEVEL).") var logLevel: String?

    func settings(extra: [Setting.Key: String?] = [:]) -> HeraldSettings {
        var flags: [Setting.Key: String] = [:]
        let given: [Setting.Key: String?] = [
            .kafkaBrokers: kafkaBrokers, .redisUrl: redisUrl, .redisPoolSize: redisPoolSize,
            .slots: slots, .redisPrefix: redisPrefix, .topicPrefix: topicPrefix,
            .instanceId: instanceId, .sessionTimeoutMs: sessionTimeoutMs, .lingerMs: lingerMs,
            .compression: compression, .logLevel: logLevel,
        ]
        for (key, value) in given.merging(extra, uniquingKeysWith: { $1 }) {
            if let value { flags[key] = value }
        }
        return HeraldSettings(flags: flags)
    }
}

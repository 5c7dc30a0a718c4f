import ArgumentParser
import HeraldApp

/// Every Herald setting as an optional flag; unset flags fall back to `HERALD_*` environment
/// variables, then the embedded stack's endpoints file, then the defaults. The flags are
/// hidden from each command's help to keep it short; `herald config` lists them all.
public struct SettingsOptions: ParsableArguments {
    public init() {}

    @Option(help: ArgumentHelp(Setting.help(.kafkaBrokers), visibility: .hidden)) public var kafkaBrokers: String?
    @Option(help: ArgumentHelp(Setting.help(.kafkaConfigFile), visibility: .hidden)) public var kafkaConfigFile: String?
    @Option(help: ArgumentHelp(Setting.help(.redisUrl), visibility: .hidden)) public var redisUrl: String?
    @Option(help: ArgumentHelp(Setting.help(.redisPoolSize), visibility: .hidden)) public var redisPoolSize: String?
    @Option(help: ArgumentHelp(Setting.help(.slots), visibility: .hidden)) public var slots: String?
    @Option(help: ArgumentHelp(Setting.help(.redisPrefix), visibility: .hidden)) public var redisPrefix: String?
    @Option(help: ArgumentHelp(Setting.help(.topicPrefix), visibility: .hidden)) public var topicPrefix: String?
    @Option(help: ArgumentHelp(Setting.help(.eventPartitions), visibility: .hidden)) public var eventPartitions: String?
    @Option(help: ArgumentHelp(Setting.help(.taskPartitions), visibility: .hidden)) public var taskPartitions: String?
    @Option(help: ArgumentHelp(Setting.help(.deliveryPartitions), visibility: .hidden)) public var deliveryPartitions: String?
    @Option(help: ArgumentHelp(Setting.help(.registrationPartitions), visibility: .hidden)) public var registrationPartitions: String?
    @Option(help: ArgumentHelp(Setting.help(.replicationFactor), visibility: .hidden)) public var replicationFactor: String?
    @Option(help: ArgumentHelp(Setting.help(.deliveryRetentionHours), visibility: .hidden)) public var deliveryRetentionHours: String?
    @Option(help: ArgumentHelp(Setting.help(.roles), visibility: .hidden)) public var roles: String?
    @Option(help: ArgumentHelp(Setting.help(.tasksPerBroadcast), visibility: .hidden)) public var tasksPerBroadcast: String?
    @Option(help: ArgumentHelp(Setting.help(.narrowEvents), visibility: .hidden)) public var narrowEvents: String?
    @Option(help: ArgumentHelp(Setting.help(.deliveriesPerTask), visibility: .hidden)) public var deliveriesPerTask: String?
    @Option(help: ArgumentHelp(Setting.help(.taskFetchWaitMs), visibility: .hidden)) public var taskFetchWaitMs: String?
    @Option(help: ArgumentHelp(Setting.help(.plannerFetchWaitMs), visibility: .hidden)) public var plannerFetchWaitMs: String?
    @Option(help: ArgumentHelp(Setting.help(.bulkLanes), visibility: .hidden)) public var bulkLanes: String?
    @Option(help: ArgumentHelp(Setting.help(.instanceId), visibility: .hidden)) public var instanceId: String?
    @Option(help: ArgumentHelp(Setting.help(.sessionTimeoutMs), visibility: .hidden)) public var sessionTimeoutMs: String?
    @Option(help: ArgumentHelp(Setting.help(.lingerMs), visibility: .hidden)) public var lingerMs: String?
    @Option(help: ArgumentHelp(Setting.help(.compression), visibility: .hidden)) public var compression: String?
    @Option(help: ArgumentHelp(Setting.help(.allocator), visibility: .hidden)) public var allocator: String?
    @Option(help: ArgumentHelp(Setting.help(.apiHost), visibility: .hidden)) public var apiHost: String?
    @Option(help: ArgumentHelp(Setting.help(.apiPort), visibility: .hidden)) public var apiPort: String?
    @Option(help: ArgumentHelp(Setting.help(.metricsPort), visibility: .hidden)) public var metricsPort: String?
    @Option(help: ArgumentHelp(Setting.help(.hubUri), visibility: .hidden)) public var hubUri: String?
    @Option(help: ArgumentHelp(Setting.help(.policies), visibility: .hidden)) public var policies: String?
    @Option(help: ArgumentHelp(Setting.help(.userTokenKey), visibility: .hidden)) public var userTokenKey: String?
    @Option(help: ArgumentHelp(Setting.help(.idSecret), visibility: .hidden)) public var idSecret: String?
    @Option(help: ArgumentHelp(Setting.help(.logLevel), visibility: .hidden)) public var logLevel: String?
    @Option(help: ArgumentHelp(Setting.help(.payloadLimits), visibility: .hidden)) public var payloadLimits: String?
    @Option(help: ArgumentHelp(Setting.help(.stallReadySeconds), visibility: .hidden)) public var stallReadySeconds: String?
    @Option(help: ArgumentHelp(Setting.help(.stallLiveSeconds), visibility: .hidden)) public var stallLiveSeconds: String?
    @Option(help: ArgumentHelp(Setting.help(.drainSeconds), visibility: .hidden)) public var drainSeconds: String?
    @Option(help: ArgumentHelp(Setting.help(.allowDemoKeys), visibility: .hidden)) public var allowDemoKeys: String?
    @Option(help: ArgumentHelp(Setting.help(.userTokenAudience), visibility: .hidden)) public var userTokenAudience: String?
    @Option(help: ArgumentHelp(Setting.help(.userTokenIssuer), visibility: .hidden)) public var userTokenIssuer: String?

    /// `extra` values win over the flags (commands with their own option for a setting).
    public func settings(extra: [Setting.Key: String?] = [:]) -> HeraldSettings {
        let given: [Setting.Key: String?] = [
            .kafkaBrokers: kafkaBrokers,
            .kafkaConfigFile: kafkaConfigFile,
            .redisUrl: redisUrl,
            .redisPoolSize: redisPoolSize,
            .slots: slots,
            .redisPrefix: redisPrefix,
            .topicPrefix: topicPrefix,
            .eventPartitions: eventPartitions,
            .taskPartitions: taskPartitions,
            .deliveryPartitions: deliveryPartitions,
            .registrationPartitions: registrationPartitions,
            .replicationFactor: replicationFactor,
            .deliveryRetentionHours: deliveryRetentionHours,
            .roles: roles,
            .tasksPerBroadcast: tasksPerBroadcast,
            .narrowEvents: narrowEvents,
            .deliveriesPerTask: deliveriesPerTask,
            .taskFetchWaitMs: taskFetchWaitMs,
            .plannerFetchWaitMs: plannerFetchWaitMs,
            .bulkLanes: bulkLanes,
            .instanceId: instanceId,
            .sessionTimeoutMs: sessionTimeoutMs,
            .lingerMs: lingerMs,
            .compression: compression,
            .allocator: allocator,
            .apiHost: apiHost,
            .apiPort: apiPort,
            .metricsPort: metricsPort,
            .hubUri: hubUri,
            .policies: policies,
            .userTokenKey: userTokenKey,
            .idSecret: idSecret,
            .logLevel: logLevel,
            .payloadLimits: payloadLimits,
            .stallReadySeconds: stallReadySeconds,
            .stallLiveSeconds: stallLiveSeconds,
            .drainSeconds: drainSeconds,
            .allowDemoKeys: allowDemoKeys,
            .userTokenAudience: userTokenAudience,
            .userTokenIssuer: userTokenIssuer,
        ]
        return HeraldSettings(flags: given.merging(extra) { $1 ?? $0 }.compactMapValues { $0 })
    }
}

import ArgumentParser
import HeraldApp

/// Every Herald setting as an optional flag; unset flags fall back to `HERALD_*` environment
/// variables, then the embedded stack's endpoints file, then the defaults. The flags are
/// hidden from each command's help to keep it short; `herald config` lists them all.
struct SettingsOptions: ParsableArguments {
    @Option(help: ArgumentHelp(Setting.help(.kafkaBrokers), visibility: .hidden)) var kafkaBrokers: String?
    @Option(help: ArgumentHelp(Setting.help(.kafkaConfigFile), visibility: .hidden)) var kafkaConfigFile: String?
    @Option(help: ArgumentHelp(Setting.help(.redisUrl), visibility: .hidden)) var redisUrl: String?
    @Option(help: ArgumentHelp(Setting.help(.redisPoolSize), visibility: .hidden)) var redisPoolSize: String?
    @Option(help: ArgumentHelp(Setting.help(.slots), visibility: .hidden)) var slots: String?
    @Option(help: ArgumentHelp(Setting.help(.redisPrefix), visibility: .hidden)) var redisPrefix: String?
    @Option(help: ArgumentHelp(Setting.help(.topicPrefix), visibility: .hidden)) var topicPrefix: String?
    @Option(help: ArgumentHelp(Setting.help(.eventPartitions), visibility: .hidden)) var eventPartitions: String?
    @Option(help: ArgumentHelp(Setting.help(.taskPartitions), visibility: .hidden)) var taskPartitions: String?
    @Option(help: ArgumentHelp(Setting.help(.deliveryPartitions), visibility: .hidden)) var deliveryPartitions: String?
    @Option(help: ArgumentHelp(Setting.help(.registrationPartitions), visibility: .hidden)) var registrationPartitions: String?
    @Option(help: ArgumentHelp(Setting.help(.replicationFactor), visibility: .hidden)) var replicationFactor: String?
    @Option(help: ArgumentHelp(Setting.help(.deliveryRetentionHours), visibility: .hidden)) var deliveryRetentionHours: String?
    @Option(help: ArgumentHelp(Setting.help(.roles), visibility: .hidden)) var roles: String?
    @Option(help: ArgumentHelp(Setting.help(.tasksPerBroadcast), visibility: .hidden)) var tasksPerBroadcast: String?
    @Option(help: ArgumentHelp(Setting.help(.narrowEvents), visibility: .hidden)) var narrowEvents: String?
    @Option(help: ArgumentHelp(Setting.help(.deliveriesPerTask), visibility: .hidden)) var deliveriesPerTask: String?
    @Option(help: ArgumentHelp(Setting.help(.taskFetchWaitMs), visibility: .hidden)) var taskFetchWaitMs: String?
    @Option(help: ArgumentHelp(Setting.help(.plannerFetchWaitMs), visibility: .hidden)) var plannerFetchWaitMs: String?
    @Option(help: ArgumentHelp(Setting.help(.bulkLanes), visibility: .hidden)) var bulkLanes: String?
    @Option(help: ArgumentHelp(Setting.help(.instanceId), visibility: .hidden)) var instanceId: String?
    @Option(help: ArgumentHelp(Setting.help(.sessionTimeoutMs), visibility: .hidden)) var sessionTimeoutMs: String?
    @Option(help: ArgumentHelp(Setting.help(.lingerMs), visibility: .hidden)) var lingerMs: String?
    @Option(help: ArgumentHelp(Setting.help(.compression), visibility: .hidden)) var compression: String?
    @Option(help: ArgumentHelp(Setting.help(.allocator), visibility: .hidden)) var allocator: String?
    @Option(help: ArgumentHelp(Setting.help(.apiHost), visibility: .hidden)) var apiHost: String?
    @Option(help: ArgumentHelp(Setting.help(.apiPort), visibility: .hidden)) var apiPort: String?
    @Option(help: ArgumentHelp(Setting.help(.metricsPort), visibility: .hidden)) var metricsPort: String?
    @Option(help: ArgumentHelp(Setting.help(.hubUri), visibility: .hidden)) var hubUri: String?
    @Option(help: ArgumentHelp(Setting.help(.policies), visibility: .hidden)) var policies: String?
    @Option(help: ArgumentHelp(Setting.help(.userTokenKey), visibility: .hidden)) var userTokenKey: String?
    @Option(help: ArgumentHelp(Setting.help(.idSecret), visibility: .hidden)) var idSecret: String?
    @Option(help: ArgumentHelp(Setting.help(.logLevel), visibility: .hidden)) var logLevel: String?
    @Option(help: ArgumentHelp(Setting.help(.payloadLimits), visibility: .hidden)) var payloadLimits: String?
    @Option(help: ArgumentHelp(Setting.help(.stallReadySeconds), visibility: .hidden)) var stallReadySeconds: String?
    @Option(help: ArgumentHelp(Setting.help(.stallLiveSeconds), visibility: .hidden)) var stallLiveSeconds: String?
    @Option(help: ArgumentHelp(Setting.help(.drainSeconds), visibility: .hidden)) var drainSeconds: String?
    @Option(help: ArgumentHelp(Setting.help(.allowDemoKeys), visibility: .hidden)) var allowDemoKeys: String?
    @Option(help: ArgumentHelp(Setting.help(.userTokenAudience), visibility: .hidden)) var userTokenAudience: String?
    @Option(help: ArgumentHelp(Setting.help(.userTokenIssuer), visibility: .hidden)) var userTokenIssuer: String?

    /// `extra` values win over the flags (commands with their own option for a setting).
    func settings(extra: [Setting.Key: String?] = [:]) -> HeraldSettings {
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

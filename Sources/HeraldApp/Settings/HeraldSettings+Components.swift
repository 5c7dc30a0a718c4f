import HeraldDomain
import HeraldKafka
import HeraldPipeline
import HeraldRedis
import HeraldRegistry
import Logging
import HeraldStreams

/// Turns resolved settings into each component's configuration. This is the one place where
/// `HERALD_*` values reach the Kafka, Redis, registry and pipeline configuration structs.
extension HeraldSettings {
    /// The topics' names and partition counts; a malformed or out-of-range count stops the
    /// command here, naming the setting.
    public var topics: HeraldTopics {
        get throws { try makeTopics() }
    }

    private func makeTopics() throws -> HeraldTopics {
        var topics = HeraldTopics()
        topics.events = topic("events")
        topics.eventsDeadLetters = topic("events.dlq")
        topics.tasks = topic("tasks")
        topics.expressTasks = topic("tasks.express")
        topics.deliveries = topic("deliveries")
        topics.status = topic("status")
        topics.scheduled = topic("scheduled")
        topics.receipts = topic("receipts")
        topics.engagements = topic("engagements")
        topics.eventsPartitions = Int32(try partitionCount(.eventPartitions))
        topics.tasksPartitions = Int32(try partitionCount(.taskPartitions))
        topics.deliveriesPartitions = Int32(try partitionCount(.deliveryPartitions))
        topics.replicationFactor = Int16(try replicationFactor())
        return topics
    }

    /// The librdkafka properties of `HERALD_KAFKA_CONFIG_FILE` (none when unset): one
    /// `key=value` per line, blank lines and `#` comments ignored, whitespace around key and
    /// value trimmed. librdkafka itself judges keys and values when a client is created.
    public func kafkaProperties() throws -> [String: String] {
        let path = self[.kafkaConfigFile]
        guard !path.isEmpty else { return [:] }
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw SettingError(key: .kafkaConfigFile, value: path, expected: "a readable UTF-8 file of key=value lines")
        }
        return try Self.parseKafkaProperties(text, path: path)
    }

    static func parseKafkaProperties(_ text: String, path: String) throws -> [String: String] {
        var properties: [String: String] = [:]
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !line.isEmpty, !line.hasPrefix("#") else { continue }
            guard let equals = line.firstIndex(of: "="),
                case let key = line[..<equals].trimmingCharacters(in: .whitespaces), !key.isEmpty
            else {
                // Never echo a line that may hold a credential.
                let lowered = line.lowercased()
                let shown =
                    lowered.contains("password") || lowered.contains("secret")
                    ? "(not shown: it may hold a credential)" : "'\(line.prefix(60))'"
                throw SettingError(
                    key: .kafkaConfigFile, value: path,
                    expected: "key=value on every line that is not blank or a # comment; line \(index + 1) is \(shown)"
                )
            }
            properties[key] = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
        }
        return properties
    }

    public func redisConfiguration() throws -> RedisConfiguration {
        do {
            return try RedisConfiguration(url: self[.redisUrl])
        } catch {
            throw SettingError(key: .redisUrl, value: self[.redisUrl], expected: "redis://host:port[/db] (\(error))")
        }
    }

    public func compression() throws -> KafkaCompression {
        let codec = KafkaCompression(rawValue: self[.compression].lowercased())
        guard [.none, .gzip, .snappy, .lz4, .zstd].contains(codec) else {
            throw SettingError(key: .compression, value: self[.compression], expected: "none, gzip, snappy, lz4 or zstd")
        }
        return codec
    }

    public func layout() throws -> SlotLayout {
        SlotLayout(slotCount: try slotCount(), prefix: self[.redisPrefix])
    }

    // The settings read in several places, each with its one range.
    func partitionCount(_ key: Setting.Key) throws -> Int {
        try int(key, in: 1...10_000, expected: "a partition count from 1 to 10000")
    }
    func replicationFactor() throws -> Int {
        try int(.replicationFactor, in: 1...32_767, expected: "a replication factor from 1 to 32767")
    }
    func slotCount() throws -> Int { try int(.slots, in: 1...16_384, expected: "a slot count from 1 to 16384") }
    func sessionTimeoutMs() throws -> Int {
        try int(.sessionTimeoutMs, in: 1_000...3_600_000, expected: "milliseconds from 1000 to 3600000")
    }
    /// `HERALD_DEFAULT_HUB_LIMITS`: a hub document's `limits` object; empty for none.
    public func defaultHubLimits() throws -> HubLimits {
        let text = self[.defaultHubLimits].trimmingCharacters(in: .whitespaces)
        guard !text.isEmpty else { return HubLimits() }
        do throws(ValidationFailure) {
            return try HubLimits.decodeLimits(Array(text.utf8))
        } catch {
            let problem = error.issues.first.map { "\($0.field.replacingOccurrences(of: "limits.", with: "")): \($0.message)" }
            throw SettingError(key: .defaultHubLimits, value: text, expected: "a hub's limits as JSON (\(problem ?? "invalid"))")
        }
    }

    public func apiPort() throws -> Int { try int(.apiPort, in: 1...65_535, expected: "a port from 1 to 65535") }
    public func metricsPort() throws -> Int { try int(.metricsPort, in: 0...65_535, expected: "a port from 1 to 65535, or 0 for none") }
    public func redisPoolSize() throws -> Int { try int(.redisPoolSize, in: 1...1_024, expected: "connections from 1 to 1024") }
    public func deliveryRetentionHours() throws -> Int {
        try int(.deliveryRetentionHours, in: 1...87_600, expected: "hours from 1 to 87600")
    }
    public func plannerFetchWaitMs() throws -> Int {
        try int(.plannerFetchWaitMs, in: 0...300_000, expected: "milliseconds from 0 to 300000")
    }

    public func pipelineConfiguration() throws -> PipelineConfiguration {
        var configuration = PipelineConfiguration()
        configuration.bootstrapServers = self[.kafkaBrokers]
        configuration.redis = try redisConfiguration()
        configuration.topics = try topics
        configuration.layout = try layout()
        configuration.planner.slotCount = configuration.layout.slotCount
        configuration.planner.bulkTaskCount = try int(.tasksPerBroadcast, in: 1...10_000, expected: "a task count from 1 to 10000")
        configuration.planner.deliveriesPerTask = try int(
            .deliveriesPerTask, in: 1...10_000_000, expected: "deliveries from 1 to 10000000")
        configuration.taskFetchWaitMaxMs = try taskFetchWaitMs()
        configuration.plannerFetchWaitMaxMs = try plannerFetchWaitMs()
        configuration.bulkLanes = try int(.bulkLanes, in: 1...64, expected: "a lane count from 1 to 64")
        configuration.planner.taskCountMultiple = configuration.bulkLanes
        guard let plan = FanoutPlanMode(rawValue: self[.fanoutPlan].lowercased()) else {
            throw SettingError(key: .fanoutPlan, value: self[.fanoutPlan], expected: "auto, scan or sets")
        }
        configuration.fanoutPlan = plan
        configuration.scanAbovePercent = try int(.scanAbovePercent, in: 0...100, expected: "a percent from 0 to 100")
        switch self[.narrowEvents].lowercased() {
        case "planner": configuration.plannerDeliversNarrowEvents = true
        case "express-lane": configuration.plannerDeliversNarrowEvents = false
        default: throw SettingError(key: .narrowEvents, value: self[.narrowEvents], expected: "planner or express-lane")
        }
        switch self[.taskHandoff].lowercased() {
        case "direct": configuration.directTaskReads = true
        case "fetch": configuration.directTaskReads = false
        default: throw SettingError(key: .taskHandoff, value: self[.taskHandoff], expected: "direct or fetch")
        }
        // Groups follow the topic prefix ("herald." -> herald-planner, ...), so two deployments
        // sharing a broker under different prefixes never share a consumer group.
        configuration.plannerGroup = groupName("planner")
        configuration.fanoutGroup = groupName("fanout")
        configuration.expressGroup = groupName("fanout-express")
        configuration.instanceId = instanceId
        configuration.abandonedTransactionAfter = .seconds(
            try int(.abandonedTransactionSeconds, in: 5...3_600, expected: "seconds from 5 to 3600"))
        configuration.sessionTimeoutMs = try sessionTimeoutMs()
        configuration.leaveGroupOnClose = try bool(.leaveGroupOnClose)
        configuration.deliveryLingerMs = try int(.lingerMs, in: 0...900_000, expected: "milliseconds from 0 to 900000")
        configuration.deliveryCompression = try compression()
        configuration.kafkaExtra = try kafkaProperties()
        configuration.payloadLimits = try payloadLimits()
        configuration.eventLimits.payloadLimits = configuration.payloadLimits
        configuration.drainTimeout = .seconds(try int(.drainSeconds, in: 1...3_600, expected: "seconds from 1 to 3600"))
        configuration.scheduleRules = try scheduleRules()
        configuration.frequencyCaps = try frequencyCaps()
        configuration.quietHoursHoldBreaking = try bool(.quietHoursHoldBreaking)
        configuration.schedulerGroup = groupName("scheduler")
        configuration.sender.group = groupName("sender")
        configuration.sender.batchSize = try int(.senderBatch, in: 1...100_000, expected: "deliveries from 1 to 100000")
        configuration.sender.loops = try int(.senderLoops, in: 1...16, expected: "a loop count from 1 to 16")
        configuration.sender.retry.maxAttempts = try int(.pushMaxAttempts, in: 1...20, expected: "attempts from 1 to 20")
        return configuration
    }

    /// `HERALD_FREQUENCY_CAPS`: the default hub's frequency caps.
    public func frequencyCaps() throws -> [FrequencyCap] {
        do {
            return try FrequencyCap.parseList(self[.frequencyCaps])
        } catch {
            throw SettingError(
                key: .frequencyCaps, value: self[.frequencyCaps], expected: error.issues.map(\.message).joined(separator: "; "))
        }
    }

    /// `HERALD_SCHEDULE_*` and `HERALD_DEFAULT_TIME_ZONE`.
    public func scheduleRules() throws -> ScheduleRules {
        let zone = self[.defaultTimeZone]
        if let problem = TimeZoneRules.problem(zone) { throw SettingError(key: .defaultTimeZone, value: zone, expected: problem) }
        return ScheduleRules(
            pastToleranceSeconds: Double(try int(.scheduleToleranceSeconds, in: 0...86_400, expected: "seconds from 0 to 86400")),
            horizonSeconds: Double(try int(.scheduleHorizonDays, in: 1...366, expected: "days from 1 to 366")) * 86_400,
            defaultTimeZone: zone
        )
    }

    /// `HERALD_PAYLOAD_LIMITS`: `platform=bytes` pairs; platforms not named keep their default.
    public func payloadLimits() throws -> PayloadLimits {
        var limits = PayloadLimits.default
        for entry in list(.payloadLimits) {
            let parts = entry.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.count == 2, let platform = Platform(rawValue: parts[0].lowercased()),
                let bytes = Int(parts[1]), (256...65_536).contains(bytes)
            else {
                throw SettingError(
                    key: .payloadLimits, value: self[.payloadLimits],
                    expected: "platform=bytes pairs (apns, fcm, wns, webpush; 256 to 65536), comma separated")
            }
            switch platform {
            case .apns: limits.apns = bytes
            case .fcm: limits.fcm = bytes
            case .wns: limits.wns = bytes
            case .webpush: limits.webpush = bytes
            }
        }
        return limits
    }

    /// How long a loop may hold input before the worker is not ready, and not live.
    public func stallLimits() throws -> (ready: Duration, live: Duration) {
        let ready = try int(.stallReadySeconds, in: 1...86_400, expected: "seconds from 1 to 86400")
        let live = try int(.stallLiveSeconds, in: 1...86_400, expected: "seconds from 1 to 86400")
        guard live >= ready else {
            throw SettingError(
                key: .stallLiveSeconds, value: self[.stallLiveSeconds],
                expected: "at least \(Setting.Key.stallReadySeconds.rawValue) (\(ready))")
        }
        return (.seconds(ready), .seconds(live))
    }

    /// `<topic prefix with dots as dashes><role>`: `herald-planner` for the default prefix.
    public func groupName(_ role: String) -> String {
        var prefix = self[.topicPrefix].replacingOccurrences(of: ".", with: "-")
        if !prefix.isEmpty && !prefix.hasSuffix("-") { prefix += "-" }
        return prefix + role
    }

    public func registryConfiguration() throws -> RegistryConfiguration {
        var configuration = RegistryConfiguration()
        configuration.indexerGroup = groupName("indexer")
        configuration.registrationsTopic = topic("registrations")
        configuration.topicPartitions = try partitionCount(.registrationPartitions)
        configuration.topicReplicationFactor = try replicationFactor()
        configuration.slotCount = try slotCount()
        configuration.redisPrefix = self[.redisPrefix]
        if !self[.idSecret].isEmpty { configuration.registrationIdSecret = self[.idSecret] }
        configuration.alertYieldSeconds = Double(
            try int(.registrationYieldSeconds, in: 0...60, expected: "seconds from 0 (never wait) to 60"))
        return configuration
    }

    /// Idempotent, acks=all: what the registration log and the event publisher need.
    ///
    /// No linger: every record is one a caller waits for (a registration write, a published
    /// event), so a linger would add its whole length to each request. `--linger-ms` is the
    /// bulk lanes' batching delay, which their commits cut short; it is not used here.
    public func reliableProducerConfiguration(clientId: String) throws -> KafkaProducerConfiguration {
        var configuration = KafkaProducerConfiguration(bootstrapServers: self[.kafkaBrokers])
        configuration.clientId = clientId
        configuration.enableIdempotence = true
        configuration.acks = .all
        configuration.lingerMs = 0
        configuration.compression = try compression()
        configuration.extra = try kafkaProperties()
        return configuration
    }

    public func consumerConfiguration(groupId: String?, clientId: String) throws -> KafkaConsumerConfiguration {
        var configuration = KafkaConsumerConfiguration(bootstrapServers: self[.kafkaBrokers], groupId: groupId)
        configuration.clientId = clientId
        configuration.sessionTimeoutMs = try sessionTimeoutMs()
        configuration.leaveGroupOnClose = try bool(.leaveGroupOnClose)
        configuration.isolationLevel = .readCommitted
        configuration.fetchWaitMaxMs = try taskFetchWaitMs()
        configuration.extra = try kafkaProperties()
        return configuration
    }

    public func taskFetchWaitMs() throws -> Int {
        try int(.taskFetchWaitMs, in: 0...300_000, expected: "milliseconds from 0 to 300000")
    }

    public func adminConfiguration() throws -> KafkaAdminConfiguration {
        var configuration = KafkaAdminConfiguration(bootstrapServers: self[.kafkaBrokers])
        configuration.extra = try kafkaProperties()
        return configuration
    }

    public var logLevel: Logger.Level {
        Logger.Level(rawValue: self[.logLevel].lowercased()) ?? .info
    }
}

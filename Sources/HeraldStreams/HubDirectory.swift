import Foundation
import HeraldDomain
import HeraldKafka
import Logging
import Synchronization

/// The deployment's hubs as one process sees them: every record of the compacted
/// `herald.hubs` topic, read from its start and then followed, so a hub created, changed or
/// deleted anywhere reaches every API and worker process without a restart.
///
/// A process's own writes (`put`, `delete`) are visible to it at once; another process's are
/// visible as soon as its follower reads them, and a lookup that misses reads the topic to its
/// end once more before it answers "no such hub" (`hub(_:)`), so a hub created a moment ago
/// through another API process is found.
public final class HubDirectory: Sendable {
    struct State {
        var hubs: [HubName: HubDefinition] = [:]
        var caughtUp = false
        var lastRefresh: ContinuousClock.Instant?
    }

    public let topic: String
    let bootstrapServers: String
    let extra: [String: String]
    let logger: Logger
    private let state = Mutex(State())
    private let producer: KafkaProducer?

    /// - Parameter producer: writes `put` and `delete`; nil for a process that only reads hubs.
    public init(
        topic: String, bootstrapServers: String, extra: [String: String] = [:], producer: KafkaProducer? = nil,
        logger: Logger = Logger(label: "herald.hubs")
    ) {
        self.topic = topic
        self.bootstrapServers = bootstrapServers
        self.extra = extra
        self.producer = producer
        self.logger = logger
    }

    /// True once the records the topic held when the follower started have been read.
    public var isCaughtUp: Bool { state.withLock { $0.caughtUp } }

    /// Every hub, by name (the default hub is not among them: it is the deployment's own).
    public var hubs: [HubDefinition] { state.withLock { $0.hubs.values.sorted { $0.name < $1.name } } }

    /// The hub named `name`; on a miss, after reading the topic to its end once more. With
    /// `strict` false that read happens at most once a second, however many lookups miss (the
    /// API's, where any caller can name hubs); with `strict` (the planner's) on every miss, so
    /// a hub created a moment ago is always found. Throws when the topic cannot be read: "no
    /// such hub" is only said when the topic says it.
    public func hub(_ name: HubName, strict: Bool = false) async throws -> HubDefinition? {
        if let known = state.withLock({ $0.hubs[name] }) { return known }
        let now = ContinuousClock.now
        let due = state.withLock { state -> Bool in
            if !strict, let last = state.lastRefresh, now - last < .seconds(1) { return false }
            state.lastRefresh = now
            return true
        }
        if due { try await refresh() }
        return state.withLock { $0.hubs[name] }
    }

    /// Reads the topic from its start to its end and applies every record.
    public func refresh() async throws {
        var tail = RecordTail(topic: topic, bootstrapServers: bootstrapServers)
        tail.extra = extra
        for try await message in tail.records(logger: logger) { apply(message) }
    }

    /// Follows the topic until the task is cancelled, reading it again after a failure.
    public func run() async {
        var pause = Duration.milliseconds(500)
        while !Task.isCancelled {
            var tail = RecordTail(topic: topic, bootstrapServers: bootstrapServers)
            tail.extra = extra
            tail.follow = true
            tail.onCaughtUp = { [weak self] in self?.state.withLock { $0.caughtUp = true } }
            do {
                for try await message in tail.records(logger: logger) {
                    apply(message)
                    pause = .milliseconds(500)
                }
            } catch {
                logger.warning("following the hubs topic failed; reading it again", metadata: ["error": "\(error)"])
            }
            try? await Task.sleep(for: pause)
            pause = min(pause * 2, .seconds(30))
        }
    }

    /// Applies one record: a hub, or a tombstone that deletes it. A record that cannot be
    /// read is logged and skipped; a record older than the hub held is ignored.
    public func apply(_ message: KafkaMessage) {
        guard let keyBytes = message.key, let name = HubName(String(decoding: keyBytes, as: UTF8.self)) else {
            logger.error("skipping a hubs record whose key is not a hub name", metadata: ["offset": "\(message.offset)"])
            return
        }
        guard let value = message.value else {
            state.withLock { _ = $0.hubs.removeValue(forKey: name) }
            return
        }
        do {
            let hub = try HubDefinition.decodeStored(value)
            guard hub.name == name else {
                logger.error("skipping a hubs record whose key and value name different hubs", metadata: ["key": "\(name)"])
                return
            }
            apply(hub)
        } catch {
            logger.error("skipping an unreadable hubs record", metadata: ["hub": "\(name)", "error": "\(error)"])
        }
    }

    func apply(_ hub: HubDefinition) {
        state.withLock { state in
            if let current = state.hubs[hub.name], current.version > hub.version { return }
            state.hubs[hub.name] = hub
        }
    }

    /// Writes `hub` to the topic, waits for the broker, and knows it at once.
    public func put(_ hub: HubDefinition) async throws {
        guard let producer else { throw HubDirectoryError.readOnly }
        _ = try await producer.send(
            KafkaOutgoingMessage(topic: topic, key: Array(hub.name.rawValue.utf8), value: hub.jsonBytes()))
        apply(hub)
    }

    /// Writes the hub's tombstone, waits for the broker, and forgets it at once.
    public func delete(_ name: HubName) async throws {
        guard let producer else { throw HubDirectoryError.readOnly }
        _ = try await producer.send(KafkaOutgoingMessage(topic: topic, key: Array(name.rawValue.utf8), value: nil))
        state.withLock { _ = $0.hubs.removeValue(forKey: name) }
    }
}

public enum HubDirectoryError: Error, Sendable, CustomStringConvertible {
    case readOnly

    public var description: String { "this process reads hubs but cannot write them (no producer)" }
}

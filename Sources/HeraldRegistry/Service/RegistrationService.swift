import Foundation
import HeraldDomain
import HeraldKafka
import HeraldRedis
import Logging
import Synchronization

/// The registry's write and read path, called by the HTTP API.
///
/// Writes go through the system of record first: validate with the domain, reserve a version
/// in Redis (`reserve` script: 412/409/410 answered atomically), send the change to
/// `herald.registrations` and wait for the broker's acknowledgement, then apply the same
/// change to Redis (write-through).
///
/// Read-your-writes: because the API applies its own change to Redis right after Kafka
/// acknowledged it, a `GET` after a successful `PUT` already sees the new version, without
/// waiting for the indexer. The apply is the same version-checked script the indexer runs,
/// built from the same record bytes, so when the indexer later consumes the record its
/// apply is a no-op, and a reindex produces identical state. If the write-through fails
/// (Redis hiccup after the ack), the change is still durable in Kafka and the indexer applies
/// it moments later; the write is reported successful and the failure logged.
public final class RegistrationService: Sendable {
    public let configuration: RegistryConfiguration
    public let log: RegistrationLog
    public let index: RegistrationIndex
    let admin: KafkaAdmin?
    let issuer: RegistrationIdIssuer
    let logger: Logger
    /// Writes wait while a breaking alert fans out (one per process: every hub's service shares it).
    public let alertYield: AlertYield

    /// - Parameter admin: used by `isReady` to ask the broker about the topic; without one,
    ///   readiness only checks Redis.
    public init(
        configuration: RegistryConfiguration, log: RegistrationLog, index: RegistrationIndex,
        admin: KafkaAdmin?, logger: Logger = Logger(label: "herald.registry")
    ) {
        self.configuration = configuration
        self.log = log
        self.index = index
        self.admin = admin
        self.issuer = RegistrationIdIssuer(secret: configuration.registrationIdSecret)
        self.logger = logger
        self.alertYield = AlertYield(index: index, configuration: configuration)
    }

    private init(_ base: RegistrationService, index: RegistrationIndex) {
        self.configuration = base.configuration
        self.log = base.log
        self.index = index
        self.admin = base.admin
        self.issuer = base.issuer
        self.logger = base.logger
        self.alertYield = base.alertYield
    }

    /// The hub whose registrations and installations this service reads and writes.
    public var hub: HubName { index.layout.hub }

    /// The service of `hub`'s registrations and installations (the same log, Redis and broker).
    public func hub(_ hub: HubName) -> RegistrationService {
        hub == self.hub ? self : RegistrationService(self, index: index.hub(hub))
    }

    // MARK: Ids

    /// A new registration id (see `RegistrationIdIssuer`); nothing is stored.
    public func issueRegistrationId() -> String { issuer.issue() }

    /// True for ids this deployment issued; false for guessed, forged or foreign ids.
    public func isIssued(_ id: String) -> Bool { issuer.isIssued(id) }

    // MARK: Registrations

    public func registration(id: String) async throws(RegistryError) -> RegistrationLookup {
        let stored = try await redis("reading registration \(id)") { try await self.index.storedRegistration(id: id) }
        switch stored {
        case .live(let document): return .found(try Self.decodeRegistration(document, id: id))
        case .gone: return .gone
        case .absent: return .notFound
        }
    }

    /// Creates or replaces a registration; returns it with the version the registry assigned.
    /// - Parameter expectedVersion: the `If-Match` version, or nil for an unconditional write.
    public func put(_ registration: Registration, expectedVersion: Int64?) async throws(RegistryError) -> Registration {
        let id = registration.registrationId
        guard isIssued(id) else {
            throw RegistryError(code: .gone, message: "registration id \(id) was never issued; ask POST /v1/registrationIDs for one")
        }
        do {
            _ = try registration.validated(limits: configuration.limits)
        } catch {
            throw RegistryError(code: .invalid, message: "registration \(id) is invalid", issues: error.issues)
        }
        await alertYield.waitWhileBreaking()
        let version = try await reserve(member: id, slotId: id, expected: expectedVersion, refuseGone: true, what: "registration \(id)")
        var stored = registration
        stored.version = version
        stored.hub = hub
        let change = RegistryChange.registration(IndexedRegistration(stored))
        try await record([change], member: id, slotId: id, version: version, what: "registration \(id)")
        return stored
    }

    public func delete(id: String, expectedVersion: Int64?) async throws(RegistryError) {
        guard isIssued(id) else {
            throw RegistryError(code: .notFound, message: "registration \(id) does not exist")
        }
        switch try await registration(id: id) {
        case .gone: throw RegistryError(code: .gone, message: "registration \(id) was already deleted")
        case .notFound: throw RegistryError(code: .notFound, message: "registration \(id) does not exist")
        case .found: break
        }
        await alertYield.waitWhileBreaking()
        let version = try await reserve(member: id, slotId: id, expected: expectedVersion, refuseGone: true, what: "registration \(id)")
        try await record(
            [.registrationDeleted(id: id, version: version)], member: id, slotId: id, version: version, what: "registration \(id)")
    }

    public func list(_ query: RegistrationQuery) async throws(RegistryError) -> RegistrationPage {
        try checkLimit(query.limit)
        if let conflict = query.conflict { throw RegistryError(code: .invalid, message: conflict.message, issues: [conflict]) }
        var cursor: RegistrationIndex.ScanCursor?
        if let text = query.cursor {
            guard let parsed = RegistrationIndex.ScanCursor(text, slotCount: index.layout.slotCount) else {
                throw Self.invalidCursor(text)
            }
            cursor = parsed
        }
        let (ids, next) = try await redis("listing registrations") {
            if let prefix = query.handlePrefix {
                return try await self.index.scanIds(handlePrefix: prefix, limit: query.limit, from: cursor)
            }
            let membership: RegistrationIndex.Membership =
                if let tag = query.tag { .tag(tag) } else if let handle = query.handle { .handle(handle) } else { .all }
            return try await self.index.scanIds(membership, limit: query.limit, from: cursor)
        }
        let documents = try await redis("reading \(ids.count) registrations") { try await self.index.documents(ofRegistrations: ids) }
        let now = Date()
        var items: [Registration] = []
        items.reserveCapacity(ids.count)
        for (id, document) in zip(ids, documents) {
            guard let document else { continue }
            let registration = try Self.decodeRegistration(document, id: id)
            if let expiresAt = registration.expiresAt, expiresAt <= now { continue }
            items.append(registration)
        }
        return RegistrationPage(items: items, nextCursor: next?.description)
    }

    // MARK: Readiness

    /// True when Redis holds a whole index (`IndexEpoch`), every cluster hash slot has a
    /// master, and the broker describes the registrations topic. While the index is missing or
    /// being rebuilt, reads would miss registrations that are in the log. Redis must answer
    /// within two seconds (a probe that hangs through a cluster failover says nothing).
    public func isReady() async -> Bool {
        let index = index
        let redisReady = await answer(within: .seconds(2)) {
            (try? await index.epoch()) != nil ? await index.pool.everySlotServed() : false
        }
        guard redisReady == true else { return false }
        guard let admin else { return true }
        let topic = configuration.registrationsTopic
        return (try? await admin.describeTopic(topic, timeout: .seconds(2))) != nil
    }

    // MARK: Shared steps

    /// Reserves a version, mapping refusals to 410/412/409.
    func reserve(member: String, slotId: String, expected: Int64?, refuseGone: Bool, what: String) async throws(RegistryError) -> Int64 {
        let reservation = try await redis("reserving a version of \(what)") {
            try await self.index.reserve(member: member, slotId: slotId, expected: expected, refuseGone: refuseGone)
        }
        switch reservation {
        case .reserved(let version):
            return version
        case .gone:
            throw RegistryError(code: .gone, message: "\(what) was deleted; its id cannot be used again")
        case .preconditionFailed(let current):
            throw RegistryError(
                code: .preconditionFailed,
                message: "If-Match names version \(expected.map(String.init) ?? "?") of \(what), but the current version is \(current)",
                currentVersion: current
            )
        case .conflict(let inFlight):
            throw RegistryError(
                code: .conflict,
                message: "another write of \(what) (version \(inFlight)) is in progress; read it again and retry",
                currentVersion: inFlight
            )
        }
    }

    /// Sends `changes` to Kafka (waiting for the acknowledgement, at most `kafkaAckTimeout`),
    /// then applies them to Redis. On a Kafka failure the reservation is released.
    func record(_ changes: [RegistryChange], member: String, slotId: String, version: Int64, what: String) async throws(RegistryError) {
        do {
            try await Self.withDeadline(seconds: configuration.kafkaAckTimeout) {
                try await self.log.write(changes, hub: self.hub)
            }
        } catch {
            try? await index.release(member: member, slotId: slotId, version: version)
            if error is DeadlineExceeded {
                throw RegistryError(
                    code: .timeout,
                    message:
                        "Kafka did not acknowledge the write of \(what) within \(configuration.kafkaAckTimeout) s; it may still be applied"
                )
            }
            throw RegistryError(code: .unavailable, message: "Kafka refused the write of \(what): \(error)")
        }
        do {
            _ = try await index.apply(changes)
        } catch {
            logger.warning(
                "write-through to Redis failed; the indexer will apply it",
                metadata: [
                    "what": "\(what)", "version": "\(version)", "error": "\(error)",
                ])
        }
    }

    func redis<T>(_ what: String, _ body: () async throws -> T) async throws(RegistryError) -> T {
        do {
            return try await body()
        } catch {
            throw RegistryError(code: .unavailable, message: "Redis failed while \(what): \(error)")
        }
    }

    func checkLimit(_ limit: Int) throws(RegistryError) {
        guard (1...configuration.maximumPageSize).contains(limit) else {
            throw RegistryError(
                code: .invalid, message: "limit must be 1 to \(configuration.maximumPageSize)",
                issues: [
                    ValidationIssue(
                        field: "limit", code: ValidationIssue.Code.invalidValue,
                        message: "\(limit) is outside 1...\(configuration.maximumPageSize)"
                    )
                ])
        }
    }

    static func invalidCursor(_ text: String) -> RegistryError {
        RegistryError(
            code: .invalid, message: "cursor \"\(text)\" was not returned by this listing",
            issues: [
                ValidationIssue(field: "cursor", code: ValidationIssue.Code.invalidValue, message: "not a cursor of this listing")
            ])
    }

    static func decodeRegistration(_ document: [UInt8], id: String) throws(RegistryError) -> Registration {
        do {
            return try JSONDecoder().decode(Registration.self, from: Data(document))
        } catch {
            throw RegistryError(code: .unavailable, message: "stored document of registration \(id) is unreadable: \(error)")
        }
    }

    struct DeadlineExceeded: Error {}

    /// Runs `operation`, failing with `DeadlineExceeded` after `seconds`. The caller is
    /// released at the deadline even if the operation ignores cancellation (a Kafka send
    /// waiting for its acknowledgement does); the operation may still finish later.
    static func withDeadline(seconds: Double, _ operation: @escaping @Sendable () async throws -> Void) async throws {
        let pending = Mutex<CheckedContinuation<Void, any Error>?>(nil)
        let finish: @Sendable (Result<Void, any Error>) -> Void = { result in
            pending.withLock { continuation in
                continuation?.resume(with: result)
                continuation = nil
            }
        }
        var tasks: [Task<Void, Never>] = []
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            pending.withLock { $0 = continuation }
            tasks = [
                Task {
                    do {
                        try await operation()
                        finish(.success(()))
                    } catch {
                        finish(.failure(error))
                    }
                },
                Task {
                    try? await Task.sleep(for: .seconds(seconds))
                    finish(.failure(DeadlineExceeded()))
                },
            ]
        }
        for task in tasks { task.cancel() }
    }
}

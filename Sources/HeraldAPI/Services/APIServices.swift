import Foundation
import HeraldDomain

/// The services behind the routes, injected so tests can run the API in memory.
public struct APIServices: Sendable {
    public var registry: any RegistrationStore
    public var publisher: any NotificationPublishing
    public var statusReader: any NotificationStatusReading
    /// Cancel requests and the list of pending schedules; nil: `DELETE` and the list answer 503.
    public var scheduler: (any NotificationScheduling)?
    /// Everything `/health/ready` asks; all must answer `true`. Defaults to the registry.
    public var readinessChecks: [any ReadinessChecking]
    /// The deployment's hubs: `/v1/hubs` and every `/v1/hubs/{hub}/…` route ask it.
    public var hubs: any HubStore
    /// Counts each hub's sends against its `sendsPerMinute`; nil counts nothing.
    public var sendQuota: (any SendQuota)?
    /// Counts a hub's registrations for its `maxRegistrations` and `maxRegistrationsPerHandle`;
    /// nil: those limits cannot be checked, and writes that would need them answer 503.
    public var registrationCounts: (any RegistrationCounting)?
    /// Gives published events back for corrections; nil: corrections answer 503.
    public var archive: (any EventArchive)?
    /// Checks a hub's push credentials as the sender will use them (the keys parse, the ids
    /// fit); nil: only their shape is checked.
    public var credentialCheck: CredentialCheck?
    /// Keeps readers' opens and dismissals; nil: `…/engagements` answers 503.
    public var engagements: (any EngagementRecording)?
    /// The events' dead letters; nil: `/v1/deadletters` answers 503.
    public var deadLetters: (any DeadLetterStore)?

    /// What is wrong with `credentials` of `hub`, as the issues of a hub document.
    public typealias CredentialCheck = @Sendable (_ credentials: HubCredentials, _ hub: HubName) -> [ValidationIssue]

    public init(
        registry: any RegistrationStore,
        publisher: any NotificationPublishing,
        statusReader: any NotificationStatusReading,
        scheduler: (any NotificationScheduling)? = nil,
        readinessChecks: [any ReadinessChecking]? = nil,
        hubs: any HubStore,
        sendQuota: (any SendQuota)? = nil,
        registrationCounts: (any RegistrationCounting)? = nil,
        archive: (any EventArchive)? = nil,
        credentialCheck: CredentialCheck? = nil,
        engagements: (any EngagementRecording)? = nil,
        deadLetters: (any DeadLetterStore)? = nil
    ) {
        self.deadLetters = deadLetters
        self.engagements = engagements
        self.archive = archive
        self.credentialCheck = credentialCheck
        self.registrationCounts = registrationCounts
        self.hubs = hubs
        self.sendQuota = sendQuota
        self.scheduler = scheduler
        self.registry = registry
        self.publisher = publisher
        self.statusReader = statusReader
        self.readinessChecks = readinessChecks ?? [registry]
    }
}

/// The registration system of record as the API sees it. HeraldRegistry's service has
/// exactly these methods, so `HeraldApp` conforms it with an empty extension; tests use an
/// in-memory fake.
public protocol RegistrationStore: ReadinessChecking {
    /// The store of `hub`'s registrations and installations (itself for its own hub).
    func store(for hub: HubName) -> any RegistrationStore
    /// A fresh id for `PUT /v1/registrations/{id}`.
    func issueRegistrationId() -> String
    /// Whether `id` came from ``issueRegistrationId()``; other ids get 410 Gone on PUT.
    func isIssued(_ id: String) -> Bool
    func registration(id: String) async throws(RegistryError) -> RegistrationLookup
    /// Writes `registration`; with `expectedVersion`, only if the stored version equals it.
    func put(_ registration: Registration, expectedVersion: Int64?) async throws(RegistryError) -> Registration
    func delete(id: String, expectedVersion: Int64?) async throws(RegistryError)
    func list(_ query: RegistrationQuery) async throws(RegistryError) -> RegistrationPage
    func installation(id: String) async throws(RegistryError) -> InstallationLookup
    func putInstallation(_ installation: Installation, expectedVersion: Int64?) async throws(RegistryError) -> StoredInstallation
    func deleteInstallation(id: String, expectedVersion: Int64?) async throws(RegistryError)
    func listInstallations(_ query: InstallationQuery) async throws(RegistryError) -> InstallationPage
}

/// Puts a validated event on `herald.events`.
public protocol NotificationPublishing: Sendable {
    /// Publishes `event`, whose JSON encoding is `body`, and returns the event id once the
    /// log has it: for a test send (`testRecipients`) or a correction (`correction`), its own id
    /// (``DerivedSend``).
    /// Throws ``EventIdConflict`` when the id was already used by an event with other content
    /// (an identical retry is accepted again); a test send never conflicts.
    func publish(_ event: NotificationEvent, body: [UInt8]) async throws -> String

    /// Publishes `event` as a rehearsal (`dryRun`) and returns the rehearsal's own id
    /// (``DerivedSend/rehearsal``); the event's id is not taken.
    func rehearse(_ event: NotificationEvent) async throws -> String
}

/// Published events as the event log holds them, for corrections.
public protocol EventArchive: Sendable {
    /// The event published under `eventId` in `hub` (the record its claim points at); nil when
    /// no claim is known or the log no longer holds the record.
    func event(eventId: String, hub: HubName) async throws -> NotificationEvent?
}

/// An event id already taken by an event with other content: 409, with its location.
public struct EventIdConflict: Error, Sendable {
    public var eventId: String

    public init(eventId: String) {
        self.eventId = eventId
    }
}

/// The latest `herald.status` record of an event, for `GET /v1/notifications/{id}`.
public protocol NotificationStatusReading: Sendable {
    /// `nil` when no status is known for `eventId` in `hub`.
    func status(eventId: String, hub: HubName) async throws -> StatusRecord?
    /// A rehearsal's previews, one per (platform, template).
    func previews(eventId: String, hub: HubName) async throws -> [RehearsalPreview]
    /// The deployment's measured fan-out speed, deliveries per second; nil before it has one.
    func measuredThroughput() async throws -> Int?
    /// A test send's receipts so far, by registration id: the outcome and its reason.
    func testOutcomes(eventId: String, hub: HubName) async throws -> [String: (outcome: PushOutcome, reason: String?)]
    /// The hub's most recent events, newest first, at most `limit`, each with its latest status.
    func recent(hub: HubName, limit: Int) async throws -> [StatusRecord]
    /// The event's reach over time; nil when no status is known for it.
    func reachSeries(eventId: String, hub: HubName) async throws -> ReachSeries?
}

extension NotificationStatusReading {
    public func recent(hub: HubName, limit: Int) async throws -> [StatusRecord] { [] }
    public func reachSeries(eventId: String, hub: HubName) async throws -> ReachSeries? { nil }
    public func previews(eventId: String, hub: HubName) async throws -> [RehearsalPreview] { [] }
    public func measuredThroughput() async throws -> Int? { nil }
    public func testOutcomes(eventId: String, hub: HubName) async throws -> [String: (outcome: PushOutcome, reason: String?)] { [:] }
}

/// The scheduler's side of the API: what `DELETE /v1/notifications/{id}` and
/// `GET /v1/notifications?state=scheduled` need.
public protocol NotificationScheduling: Sendable {
    /// Puts a cancel request for `eventId` of `hub` on `herald.scheduled`; the scheduler role acts on it.
    func requestCancel(eventId: String, hub: HubName) async throws
    /// Marks `eventId` of `hub`, being fanned out, as stopped: its tasks write no more
    /// deliveries, and its status becomes `cancelled` once they have all reported.
    func requestStop(eventId: String, hub: HubName) async throws
    /// The schedules with releases still pending, next release first.
    func pendingSchedules() async throws -> [ScheduledEvent]
}

/// Something `/health/ready` asks before saying the API can take traffic (Kafka and Redis
/// answer, for example).
public protocol ReadinessChecking: Sendable {
    func isReady() async -> Bool
}

/// The deployment's hubs as the API sees them (HeraldStreams' `HubDirectory` in production,
/// an in-memory one in tests). The default hub is the deployment's own and never in it.
public protocol HubStore: Sendable {
    /// The hub named `name`, nil when there is none; throws when the hubs cannot be read.
    func hub(_ name: HubName) async throws -> HubDefinition?
    /// Every hub, by name.
    func allHubs() async -> [HubDefinition]
    /// Creates or replaces a hub, durably, before it returns.
    func put(_ hub: HubDefinition) async throws
    /// Deletes a hub, durably, before it returns.
    func delete(_ name: HubName) async throws
}

/// Keeps what readers did with alerts: `herald.engagements` and the event's counts.
public protocol EngagementRecording: Sendable {
    /// Writes `engagement` (its device's platform and template filled in) to `herald.engagements`
    /// and counts it once per device and action; true when this was its first report.
    func record(_ engagement: Engagement, publishedAt: Date?) async throws -> Bool
    /// The event's engagement counts (``EngagementFunnel/fields(of:publishedAt:)``).
    func counts(eventId: String, hub: HubName) async throws -> [String: Int]
}

/// Counts a hub's accepted sends in the current minute.
public protocol SendQuota: Sendable {
    /// Counts one send of `hub`; false when it is over `perMinute` in this minute (the send is
    /// refused and not counted again).
    func admit(hub: HubName, perMinute: Int) async throws -> Bool
}

/// Counts a hub's live registrations, for its quotas.
public protocol RegistrationCounting: Sendable {
    /// Every live registration of `hub` (an installation counts one per template).
    func registrations(hub: HubName) async throws -> Int
    /// The live registrations of `hub` with push handle `handle`.
    func registrations(hub: HubName, handle: String) async throws -> Int
    /// Adds the templates of `written` to those `hub` has had, unless that would make them more
    /// than `limit`: then nothing is added. Answers whether they were admitted and how many
    /// distinct templates the hub has had before this write.
    func admitTemplates(of written: [Registration], hub: HubName, limit: Int) async throws -> (admitted: Bool, held: Int)
}

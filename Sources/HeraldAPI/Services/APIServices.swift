/// The services behind the routes, injected so tests can run the API in memory.
public struct APIServices: Sendable {
    public var registry: any RegistrationStore
    public var publisher: any NotificationPublishing
    public var statusReader: any NotificationStatusReading
    /// Everything `/health/ready` asks; all must answer `true`. Defaults to the registry.
    public var readinessChecks: [any ReadinessChecking]

    public init(
        registry: any RegistrationStore,
        publisher: any NotificationPublishing,
        statusReader: any NotificationStatusReading,
        readinessChecks: [any ReadinessChecking]? = nil
    ) {
        self.registry = registry
        self.publisher = publisher
        self.statusReader = statusReader
        self.readinessChecks = readinessChecks ?? [registry]
    }
}

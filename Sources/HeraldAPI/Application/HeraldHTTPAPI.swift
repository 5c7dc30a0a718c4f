import Foundation
import Hummingbird
import Logging
import Metrics
import Prometheus

/// Builds the router with every route, the error and metrics middleware and
/// authentication on `/v1`. Exposed separately from ``buildApplication`` so tests can run
/// it in memory and compare its routes with the OpenAPI document.
///
/// - Parameters:
///   - prometheus: the registry `/metrics` renders (the one the process's metrics factory
///     writes to); `nil` serves an empty page.
///   - metricsFactory: where request metrics go; defaults to the global `MetricsSystem`.
///   - now: the clock for token expiry and publish times.
/// - Throws: ``APIConfigurationError`` when `configuration` fails ``APIConfiguration/validate()``.
public func buildRouter(
    services: APIServices,
    configuration: APIConfiguration,
    prometheus: PrometheusCollectorRegistry? = nil,
    metricsFactory: (any MetricsFactory)? = nil,
    now: @escaping @Sendable () -> Date = Date.init
) async throws(APIConfigurationError) -> Router<APIRequestContext> {
    try configuration.validate()
    let router = Router(context: APIRequestContext.self)
    // Metrics outside errors, so the counted status is the one the client got.
    router.add(middleware: RequestMetricsMiddleware(factory: metricsFactory ?? MetricsSystem.factory))
    router.add(middleware: ErrorMiddleware())

    guard let openAPI = OperationsRoutes.openAPIDocument() else {
        throw APIConfigurationError(
            code: "openapi_document_missing",
            message: "openapi.yaml is missing: install the herald_HeraldAPI.resources folder next to the herald executable")
    }
    OperationsRoutes(readinessChecks: services.readinessChecks, prometheus: prometheus, openAPI: openAPI).add(to: router)
    guard let consoleAssets = ConsoleRoutes.bundledAssets() else {
        throw APIConfigurationError(
            code: "console_files_missing",
            message: "the console's files are missing: install the herald_HeraldAPI.resources folder next to the herald executable")
    }

    var userTokens: UserTokenVerifier?
    if let key = configuration.userTokenKey {
        userTokens = await UserTokenVerifier.make(
            key: key, leeway: configuration.userTokenLeeway, maxLifetime: configuration.maxTokenLifetime,
            audience: configuration.userTokenAudience, issuer: configuration.userTokenIssuer
        )
    }
    let authenticator = RequestAuthenticator(configuration: configuration, userTokens: userTokens, now: now)
    let v1 = router.group("v1").add(middleware: AuthenticationMiddleware(authenticator: authenticator, hubs: services.hubs))
    HubRoutes(hubs: services.hubs, hubResource: configuration.hubResource, credentialCheck: services.credentialCheck).add(to: v1)
    ConsoleRoutes(assets: consoleAssets, hubResource: configuration.hubResource).add(to: router, v1: v1)
    // The default hub's routes at /v1/…, and every hub's at /v1/hubs/{hub}/…: the same
    // handlers, which read the hub from the path (`RequestReading.hub(of:)`).
    // Azure Notification Hubs' REST protocol at /{hub}/…, on the same cores.
    let quotas = RegistrationQuotas(
        hubs: services.hubs, counts: services.registrationCounts, defaultMaxRegistrations: configuration.defaultMaxRegistrations,
        defaultHubLimits: configuration.defaultHubLimits)
    AzureRoutes(
        installations: InstallationRoutes(registry: services.registry, limits: configuration.limits, quotas: quotas),
        notifications: NotificationRoutes(
            publisher: services.publisher, statusReader: services.statusReader, scheduler: services.scheduler,
            hubs: services.hubs, sendQuota: services.sendQuota, limits: configuration.limits,
            scheduleRules: configuration.scheduleRules, now: now, archive: services.archive, engagements: services.engagements,
            registry: services.registry, defaultHubLimits: configuration.defaultHubLimits),
        registrations: RegistrationRoutes(registry: services.registry, limits: configuration.limits, quotas: quotas),
        hubResource: configuration.hubResource, limits: configuration.limits, now: now,
        testSendWait: configuration.testSendWait
    ).add(to: router, authenticator: authenticator, hubs: services.hubs)
    for group in [v1, v1.group("hubs/{hub}")] {
        RegistrationRoutes(registry: services.registry, limits: configuration.limits, quotas: quotas).add(to: group)
        InstallationRoutes(registry: services.registry, limits: configuration.limits, quotas: quotas).add(to: group)
        NotificationRoutes(
            publisher: services.publisher, statusReader: services.statusReader, scheduler: services.scheduler,
            hubs: services.hubs, sendQuota: services.sendQuota, limits: configuration.limits,
            scheduleRules: configuration.scheduleRules, now: now, archive: services.archive, engagements: services.engagements,
            registry: services.registry, deadLetters: services.deadLetters, defaultHubLimits: configuration.defaultHubLimits
        ).add(to: group)
    }
    return router
}

/// The HTTP API as a Hummingbird application bound to `configuration.host:port`. It is a
/// swift-service-lifecycle `Service`, so `HeraldApp` runs it inside its `ServiceGroup`.
public func buildApplication(
    services: APIServices,
    configuration: APIConfiguration,
    prometheus: PrometheusCollectorRegistry? = nil,
    metricsFactory: (any MetricsFactory)? = nil,
    logger: Logger = Logger(label: "herald.api")
) async throws(APIConfigurationError) -> some ApplicationProtocol {
    let router = try await buildRouter(
        services: services, configuration: configuration, prometheus: prometheus, metricsFactory: metricsFactory)
    return Application(
        router: router,
        configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "herald"),
        logger: logger
    )
}

import Foundation
import HTTPTypes
import HeraldAPI
import HeraldDomain
import Hummingbird
import HummingbirdTesting
import NIOCore
import Prometheus

/// An in-memory Herald API with fake services, the policies `listen`, `send`, `manage`
/// and `listenSend`, and user tokens enabled.
struct TestHub {
    static let hubResource = "http://localhost:8080"
    static let userTokenKey = "user-token-secret-for-tests-0123456789"
    static let policies = [
        SharedAccessPolicy(name: "listen", key: "listen-key", rights: [.listen]),
        SharedAccessPolicy(name: "send", key: "send-key", rights: [.send]),
        SharedAccessPolicy(name: "manage", key: "manage-key", rights: [.manage]),
        SharedAccessPolicy(name: "listenSend", key: "listen-send-key", rights: [.listen, .send]),
    ]

    let registry = InMemoryRegistry()
    let publisher = RecordingPublisher()
    /// Holds one hub besides the default, `sports`, with Azure's two default policies.
    let hubs = InMemoryHubStore([HubDefinition(name: HubName("sports")!, policies: HubDefinition.defaultPolicies())])
    let sendQuota = CountingSendQuota()
    let registrationCounts = FixedRegistrationCounts()
    var statusReader = FixedStatusReader()
    /// When set, the statuses and the scheduler (`DELETE /v1/notifications/{id}`).
    var fanout: StoppingFanout?
    let prometheus = PrometheusCollectorRegistry()
    var limits = APILimits.default
    var userTokenAudience: String?
    var userTokenIssuer: String?
    var rateLimits: RateLimits?
    var defaultMaxRegistrations: Int?
    var defaultHubLimits = HubLimits()
    /// The published events a correction reads back.
    var archive = FixedEventArchive()
    let engagements = InMemoryEngagements()
    var deadLetters = FixedDeadLetters()

    var configuration: APIConfiguration {
        APIConfiguration(
            hubResource: Self.hubResource, policies: Self.policies, userTokenKey: Self.userTokenKey, limits: limits,
            userTokenAudience: userTokenAudience, userTokenIssuer: userTokenIssuer, rateLimits: rateLimits,
            defaultMaxRegistrations: defaultMaxRegistrations, defaultHubLimits: defaultHubLimits
        )
    }

    func router() async throws -> Router<APIRequestContext> {
        try await buildRouter(
            services: APIServices(
                registry: registry, publisher: publisher, statusReader: fanout.map { $0 as any NotificationStatusReading } ?? statusReader,
                scheduler: fanout, hubs: hubs,
                sendQuota: sendQuota,
                registrationCounts: registrationCounts, archive: archive, engagements: engagements, deadLetters: deadLetters),
            configuration: configuration,
            prometheus: prometheus,
            metricsFactory: PrometheusMetricsFactory(registry: prometheus)
        )
    }

    func run(_ test: @escaping @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        let app = Application(router: try await router())
        try await app.test(.router, test)
    }

    // MARK: Credentials

    static func sas(_ policy: String, resource: String = hubResource, expiresIn seconds: TimeInterval = 3600, key: String? = nil)
        -> HTTPFields
    {
        let key = key ?? policies.first { $0.name == policy }!.key
        return [
            .authorization: SharedAccessSignature.token(
                resource: resource, policy: policy, key: key, expiry: Date().addingTimeInterval(seconds))
        ]
    }

    static func user(_ id: String, expiresIn seconds: TimeInterval = 3600, key: String = userTokenKey) async throws -> HTTPFields {
        [.authorization: "Bearer " + (try await UserToken.make(user: id, key: key, expiry: Date().addingTimeInterval(seconds)))]
    }

    static let listen = sas("listen")
    static let send = sas("send")
    static let manage = sas("manage")
}

extension TestClientProtocol {
    /// Sends `body` (JSON text unless `headers` name another Content-Type) with `headers`.
    @discardableResult
    func call(_ method: HTTPRequest.Method, _ uri: String, _ headers: HTTPFields = [:], body: String? = nil, ifMatch: String? = nil)
        async throws -> TestResponse
    {
        var headers = headers
        if body != nil, headers[.contentType] == nil { headers[.contentType] = "application/json" }
        if let ifMatch { headers[.ifMatch] = ifMatch }
        return try await execute(uri: uri, method: method, headers: headers, body: body.map { ByteBuffer(string: $0) })
    }
}

extension TestResponse {
    var text: String { String(buffer: body) }

    /// The body as JSON (fails the test's `try` when it is not JSON).
    func json() throws -> JSONValue { try JSONValue.parse(Array(text.utf8)) }

    /// `error.code` of an error document, or `nil`.
    var errorCode: String? {
        guard case .string(let code)? = (try? json())?["error"]?["code"] else { return nil }
        return code
    }

    /// `error.field` of an error document, or `nil`.
    var errorField: String? {
        guard case .string(let field)? = (try? json())?["error"]?["field"] else { return nil }
        return field
    }

    /// Every `error.issues[].field`.
    var issueFields: [String] {
        guard case .array(let issues)? = (try? json())?["error"]?["issues"] else { return [] }
        return issues.compactMap { if case .string(let field)? = $0["field"] { field } else { nil } }
    }
}

/// Request bodies the tests share.
enum Fixture {
    static let apnsToken = String(repeating: "ab12", count: 16)
    static let otherApnsToken = String(repeating: "cd34", count: 16)
    static let fcmToken = "fcm-token:APA91b" + String(repeating: "x", count: 60)

    static func registration(
        tags: [String] = ["World", "Science"], handle: String = apnsToken, platform: String = "apns", template: String? = nil
    ) -> String {
        let tagList = tags.map { "\"\($0)\"" }.joined(separator: ",")
        let templatePart = template.map { ",\"template\":{\"name\":\"newsTemplate\",\"body\":\($0)}" } ?? ""
        return "{\"platform\":\"\(platform)\",\"handle\":\"\(handle)\",\"tags\":[\(tagList)]\(templatePart)}"
    }

    /// The seed's localized template for `language` as a JSON string literal.
    static func newsTemplate(_ language: String) -> String {
        "\"{\\\"aps\\\":{\\\"alert\\\":\\\"$(News_\(language))\\\"},\\\"inAppMessage\\\":\\\"$(News_\(language))\\\"}\""
    }

    static func installation(tags: [String] = ["World"], userId: String? = nil) -> String {
        let tagList = tags.map { "\"\($0)\"" }.joined(separator: ",")
        let user = userId.map { ",\"userId\":\"\($0)\"" } ?? ""
        return """
            {"platform":"apns","pushChannel":"\(apnsToken)","tags":[\(tagList)]\(user),
             "templates":{"english":{"body":\(newsTemplate("English")),"tags":["lang-en"]},
                          "french":{"body":\(newsTemplate("French")),"tags":["lang-fr"]}}}
            """
    }
}

import HTTPTypes
import HeraldAPI
import HeraldDomain
import Hummingbird
import HummingbirdTesting
import Testing
import Yams

@Suite("Health, metrics and OpenAPI")
struct OperationsRouteTests {
    @Test func livenessAndReadinessFollowTheDependencies() async throws {
        let hub = TestHub()
        try await hub.run { client async throws in
            #expect(try await client.call(.get, "/health/live").status == .ok)
            #expect(try await client.call(.get, "/health/ready").status == .ok)
            hub.registry.setReady(false)
            let notReady = try await client.call(.get, "/health/ready")
            #expect(notReady.status == .serviceUnavailable)
            #expect(notReady.errorCode == "not_ready")
        }
    }

    @Test func metricsCountRequestsByRouteAndStatus() async throws {
        let hub = TestHub()
        try await hub.run { client async throws in
            try await client.call(.post, "/v1/registrationIDs", TestHub.listen)
            try await client.call(.post, "/v1/registrationIDs")
            let metrics = try await client.call(.get, "/metrics")
            #expect(metrics.status == .ok)
            #expect(
                metrics.text.contains(#"herald_http_requests_total{route="/v1/registrationIDs",method="POST",status="201"} 1"#),
                "\(metrics.text)")
            #expect(metrics.text.contains(#"herald_http_requests_total{route="/v1/registrationIDs",method="POST",status="401"} 1"#))
            #expect(metrics.text.contains("herald_http_request_duration_seconds"))
        }
    }

    @Test func unknownRoutesGetAJSONNotFound() async throws {
        try await TestHub().run { client async throws in
            let response = try await client.call(.get, "/v2/anything", TestHub.manage)
            #expect(response.status == .notFound)
            #expect(response.errorCode == "route_not_found")
        }
    }

    /// Every registered route is documented and every documented operation is routed; the
    /// document served is the checked-in openapi.yaml, and its platform enums are the domain's.
    @Test func openAPIDocumentMatchesTheRoutes() async throws {
        let hub = TestHub()
        let router = try await hub.router()
        let routed = Set(router.routes.map { "\($0.method.rawValue) \($0.path.description)" })
        #expect(routed.count >= 16)
        try await hub.run { client async throws in
            let response = try await client.call(.get, "/openapi.yaml")
            #expect(response.status == .ok)
            #expect(response.headers[.contentType] == "application/yaml; charset=utf-8")
            let text = String(buffer: response.body)
            let document = try #require(try Yams.load(yaml: text) as? [String: Any])
            #expect(document["openapi"] as? String == "3.1.0")
            let paths = try #require(document["paths"] as? [String: [String: Any]], "no paths in the OpenAPI document")
            var documented = Set<String>()
            for (path, operations) in paths {
                // A path item's `parameters` (the hub routes' `{hub}`) is not an operation.
                for method in operations.keys where method != "parameters" { documented.insert("\(method.uppercased()) \(path)") }
            }
            #expect(routed.subtracting(documented).isEmpty, "routed but not documented: \(routed.subtracting(documented).sorted())")
            #expect(documented.subtracting(routed).isEmpty, "documented but not routed: \(documented.subtracting(routed).sorted())")

            let schemas = try #require((document["components"] as? [String: Any])?["schemas"] as? [String: Any])
            let platforms = Platform.allCases.map(\.rawValue)
            for schema in ["Registration", "Installation"] {
                let properties = (schemas[schema] as? [String: Any])?["properties"] as? [String: Any]
                let platform = properties?["platform"] as? [String: Any]
                #expect(platform?["enum"] as? [String] == platforms, "\(schema).platform lists other platforms than Platform")
            }
        }
    }

    @Test(arguments: [
        (APIConfiguration(userTokenKey: "short"), "user_token_key_too_short"),
        (APIConfiguration(policies: [SharedAccessPolicy(name: "p", key: "", rights: [.listen])]), "empty_policy_key"),
        (
            APIConfiguration(policies: [
                SharedAccessPolicy(name: "p", key: "a", rights: [.listen]), SharedAccessPolicy(name: "p", key: "b", rights: [.send]),
            ]), "duplicate_policy"
        ),
        (APIConfiguration(hubResource: "localhost:8080"), "invalid_hub_resource"),
    ])
    func unusableConfigurationsAreRefused(configuration: APIConfiguration, code: String) async {
        let hub = TestHub()
        await #expect {
            _ = try await buildRouter(
                services: APIServices(registry: hub.registry, publisher: hub.publisher, statusReader: hub.statusReader, hubs: hub.hubs),
                configuration: configuration
            )
        } throws: { error in
            (error as? APIConfigurationError)?.code == code
        }
    }
}

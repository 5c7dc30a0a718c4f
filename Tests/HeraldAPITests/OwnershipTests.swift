import HTTPTypes
import HeraldDomain
import Hummingbird
import HummingbirdTesting
import Testing
@testable import HeraldAPI

/// Who may touch a device record, for every verb and every kind of credential: a record that
/// belongs to a user (`userId`, `$UserId:` tag) is that user's or Manage's; one that belongs
/// to no user is also Listen's; Send touches none. Installation ids are chosen by clients
/// and guessable, so these rules are what stops a Listen key from taking a user's device over.
@Suite("Device ownership: installations and registrations x verbs x credentials")
struct OwnershipTests {
    enum Credential: String, CaseIterable, Sendable { case manage, listen, send, owner, otherUser }
    enum Verb: String, CaseIterable, Sendable { case get, put, patch, delete }

    struct Case: Sendable, CustomTestStringConvertible {
        var ownedByAlice: Bool
        var credential: Credential
        var verb: Verb
        var testDescription: String { "\(ownedByAlice ? "alice's" : "anonymous") record, \(credential), \(verb)" }

        /// The status the rules call for.
        var expected: HTTPResponse.Status {
            let allowed: Bool =
                switch credential {
                case .manage: true
                case .listen: !ownedByAlice
                case .send: false
                case .owner: ownedByAlice
                case .otherUser: false
                }
            guard allowed else { return .forbidden }
            return verb == .delete ? .noContent : .ok
        }
    }

    static let cases: [Case] = [true, false].flatMap { owned in
        Credential.allCases.flatMap { credential in Verb.allCases.map { Case(ownedByAlice: owned, credential: credential, verb: $0) } }
    }

    static func headers(_ credential: Credential) async throws -> HTTPFields {
        switch credential {
        case .manage: TestHub.manage
        case .listen: TestHub.listen
        case .send: TestHub.send
        case .owner: try await TestHub.user("alice")
        case .otherUser: try await TestHub.user("bob")
        }
    }

    @Test("installations", arguments: cases)
    func installations(_ testCase: Case) async throws {
        let headers = try await Self.headers(testCase.credential)
        try await TestHub().run { client async throws in
            let created = try await client.call(
                .put, "/v1/installations/phone-1", TestHub.manage, body: Fixture.installation(userId: testCase.ownedByAlice ? "alice" : nil)
            )
            try #require(created.status == .ok)
            let response: TestResponse =
                switch testCase.verb {
                case .get: try await client.call(.get, "/v1/installations/phone-1", headers)
                case .put: try await client.call(.put, "/v1/installations/phone-1", headers, body: Fixture.installation())
                case .patch:
                    try await client.call(
                        .patch, "/v1/installations/phone-1", headers,
                        body: #"[{"op":"replace","path":"/pushChannel","value":"\#(String(repeating: "99", count: 32))"}]"#)
                case .delete: try await client.call(.delete, "/v1/installations/phone-1", headers)
                }
            #expect(response.status == testCase.expected, "\(response.text)")
            if response.status == .forbidden, testCase.credential != .send {
                #expect(response.errorCode == "not_owner")
            }
            // A refused change left the record as it was.
            if response.status == .forbidden {
                let stored = try await client.call(.get, "/v1/installations/phone-1", TestHub.manage)
                #expect(try stored.json()["pushChannel"]?.stringValue == Fixture.apnsToken)
                #expect(try stored.json()["userId"]?.stringValue == (testCase.ownedByAlice ? "alice" : nil))
            }
        }
    }

    @Test("registrations", arguments: cases.filter { $0.verb != .patch })
    func registrations(_ testCase: Case) async throws {
        let hub = TestHub()
        let id = hub.registry.issueRegistrationId()
        let headers = try await Self.headers(testCase.credential)
        try await hub.run { client async throws in
            let tags = testCase.ownedByAlice ? ["World", "$UserId:{alice}"] : ["World"]
            try #require(
                try await client.call(.put, "/v1/registrations/\(id)", TestHub.manage, body: Fixture.registration(tags: tags)).status == .ok
            )
            let response: TestResponse =
                switch testCase.verb {
                case .get: try await client.call(.get, "/v1/registrations/\(id)", headers)
                case .put: try await client.call(.put, "/v1/registrations/\(id)", headers, body: Fixture.registration(tags: ["Sports"]))
                case .patch, .delete: try await client.call(.delete, "/v1/registrations/\(id)", headers)
                }
            #expect(response.status == testCase.expected, "\(response.text)")
        }
    }
}

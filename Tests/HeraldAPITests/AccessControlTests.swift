import Crypto
import Foundation
import HTTPTypes
import HeraldAPI
import HeraldDomain
import Hummingbird
import HummingbirdTesting
import Testing

@Suite("Access control")
struct AccessControlTests {
    static let event = #"{"tags":"World","properties":{"News_English":"Summit ends"}}"#

    // MARK: Authentication (401)

    @Test func missingTokenIsUnauthorizedWithAChallenge() async throws {
        try await TestHub().run { client async throws in
            let response = try await client.call(.post, "/v1/registrationIDs")
            #expect(response.status == .unauthorized)
            #expect(response.errorCode == "missing_token")
            #expect(response.headers[values: .wwwAuthenticate].contains { $0.hasPrefix("SharedAccessSignature") })
        }
    }

    @Test(
        arguments: [
            ("forged", TestHub.sas("manage", key: "not-the-key"), "invalid_token"),
            ("expired", TestHub.sas("manage", expiresIn: -60), "token_expired"),
            ("valid for over 31 days", TestHub.sas("manage", expiresIn: 32 * 86_400), "token_lifetime_too_long"),
            // The same answer as a forged signature: policy names do not leak.
            ("unknown policy", TestHub.sas("nobody", key: "x"), "invalid_token"),
            ("no host in sr", TestHub.sas("manage", resource: "/v1/notifications"), "invalid_token"),
            ("other hub", TestHub.sas("manage", resource: "http://elsewhere:8080"), "wrong_resource"),
            ("other scheme", [HTTPField.Name.authorization: "Basic YWxpY2U6cHc="], "unsupported_scheme"),
            ("garbage", [HTTPField.Name.authorization: "SharedAccessSignature nonsense"], "malformed_token"),
        ] as [(String, HTTPFields, String)])
    func badSharedAccessTokensAreUnauthorized(_ name: String, headers: HTTPFields, code: String) async throws {
        let hub = TestHub()
        try await hub.run { client async throws in
            let response = try await client.call(.post, "/v1/notifications", headers, body: Self.event)
            #expect(response.status == .unauthorized)
            #expect(response.errorCode == code)
            #expect(!response.headers[values: .wwwAuthenticate].isEmpty)
        }
        #expect(hub.publisher.count == 0)
    }

    @Test func validTokensAreAccepted() async throws {
        let hub = TestHub()
        try await hub.run { client async throws in
            #expect(try await client.call(.post, "/v1/notifications", TestHub.send, body: Self.event).status == .accepted)
            // A trailing slash on the hub URI and upper-case host are the same resource.
            let loose = TestHub.sas("send", resource: "HTTP://LOCALHOST:8080/")
            #expect(try await client.call(.post, "/v1/notifications", loose, body: Self.event).status == .accepted)
        }
        #expect(hub.publisher.count == 2)
    }

    @Test func aTokenScopedToOneRegistrationWorksOnlyThere() async throws {
        let hub = TestHub()
        let mine = hub.registry.issueRegistrationId()
        let other = hub.registry.issueRegistrationId()
        let scoped = TestHub.sas("listen", resource: "\(TestHub.hubResource)/v1/registrations/\(mine)")
        try await hub.run { client async throws in
            #expect(try await client.call(.put, "/v1/registrations/\(mine)", scoped, body: Fixture.registration()).status == .ok)
            let elsewhere = try await client.call(.put, "/v1/registrations/\(other)", scoped, body: Fixture.registration())
            #expect(elsewhere.status == .unauthorized)
            #expect(elsewhere.errorCode == "wrong_resource")
        }
        #expect(hub.registry.writes == 1)
    }

    // MARK: Rights (403)

    @Test func listenRegistersButCannotSendListByTagOrClaimUsers() async throws {
        let hub = TestHub()
        let id = hub.registry.issueRegistrationId()
        try await hub.run { client async throws in
            #expect(try await client.call(.post, "/v1/registrationIDs", TestHub.listen).status == .created)
            #expect(try await client.call(.put, "/v1/registrations/\(id)", TestHub.listen, body: Fixture.registration()).status == .ok)
            #expect(try await client.call(.get, "/v1/registrations?handle=\(Fixture.apnsToken)", TestHub.listen).status == .ok)

            let send = try await client.call(.post, "/v1/notifications", TestHub.listen, body: Self.event)
            #expect(send.status == .forbidden)
            #expect(send.errorCode == "insufficient_rights")
            #expect(try await client.call(.get, "/v1/registrations?tag=World", TestHub.listen).status == .forbidden)
            // Listing by the start of a handle would let a Listen key walk every device's handle.
            let byStart = try await client.call(.get, "/v1/registrations?handlePrefix=a", TestHub.listen)
            #expect(byStart.status == .forbidden && byStart.errorField == "handlePrefix")
            #expect(try await client.call(.get, "/v1/installations?tag=World", TestHub.listen).status == .forbidden)

            let claim = try await client.call(
                .put, "/v1/registrations/\(id)", TestHub.listen, body: Fixture.registration(tags: ["World", "$UserId:{alice}"]))
            #expect(claim.status == .forbidden)
            #expect(claim.errorCode == "reserved_tag")
            #expect(claim.errorField == "tags[1]")
            let claimInstallation = try await client.call(
                .put, "/v1/installations/i1", TestHub.listen, body: Fixture.installation(tags: ["$InstallationId:{i2}"]))
            #expect(claimInstallation.status == .forbidden)
            #expect(claimInstallation.errorField == "tags[0]")
            let userInstallation = try await client.call(
                .put, "/v1/installations/i1", TestHub.listen, body: Fixture.installation(userId: "alice"))
            #expect(userInstallation.status == .forbidden)
            #expect(userInstallation.errorField == "userId")
            let ownTag = try await client.call(
                .put, "/v1/installations/i1", TestHub.listen, body: Fixture.installation(tags: ["$InstallationId:{i1}"]))
            #expect(ownTag.status == .ok)
        }
        #expect(hub.publisher.count == 0)
        #expect(hub.registry.writes == 2)
    }

    @Test func sendPublishesButCannotRegister() async throws {
        let hub = TestHub()
        let id = hub.registry.issueRegistrationId()
        try await hub.run { client async throws in
            #expect(try await client.call(.post, "/v1/notifications", TestHub.send, body: Self.event).status == .accepted)
            #expect(try await client.call(.put, "/v1/registrations/\(id)", TestHub.send, body: Fixture.registration()).status == .forbidden)
            #expect(try await client.call(.post, "/v1/registrationIDs", TestHub.send).status == .forbidden)
            #expect(try await client.call(.get, "/v1/registrations?tag=World", TestHub.send).status == .forbidden)
        }
        #expect(hub.registry.writes == 0)
    }

    @Test func manageDoesEverything() async throws {
        let hub = TestHub()
        let id = hub.registry.issueRegistrationId()
        try await hub.run { client async throws in
            let put = try await client.call(
                .put, "/v1/registrations/\(id)", TestHub.manage,
                body: Fixture.registration(tags: ["$UserId:{alice}", "$InstallationId:{x}"]))
            #expect(put.status == .ok)
            #expect(
                try await client.call(.get, "/v1/registrations?tag=%24UserId%3A%7Balice%7D", TestHub.manage).json()["items"]?.arrayValue?
                    .count == 1)
            #expect(try await client.call(.get, "/v1/installations", TestHub.manage).status == .ok)
            #expect(try await client.call(.post, "/v1/notifications", TestHub.manage, body: Self.event).status == .accepted)
        }
    }

    // MARK: Notify users

    @Test func userTokenAddsItsUserTagAndCannotClaimAnother() async throws {
        let hub = TestHub()
        let id = hub.registry.issueRegistrationId()
        let alice = try await TestHub.user("alice")
        try await hub.run { client async throws in
            let put = try await client.call(.put, "/v1/registrations/\(id)", alice, body: Fixture.registration(tags: ["World"]))
            #expect(put.status == .ok)
            #expect(try put.json()["tags"]?.strings == ["World", "$UserId:{alice}"])

            let claim = try await client.call(.put, "/v1/registrations/\(id)", alice, body: Fixture.registration(tags: ["$UserId:{bob}"]))
            #expect(claim.status == .forbidden)
            #expect(claim.errorField == "tags[0]")

            let installation = try await client.call(.put, "/v1/installations/alice-phone", alice, body: Fixture.installation())
            #expect(installation.status == .ok)
            #expect(try installation.json()["userId"]?.stringValue == "alice")
            let otherUser = try await client.call(.put, "/v1/installations/alice-phone", alice, body: Fixture.installation(userId: "bob"))
            #expect(otherUser.status == .forbidden)

            #expect(try await client.call(.post, "/v1/notifications", alice, body: Self.event).status == .forbidden)
        }
        #expect(hub.registry.writes == 2)
        #expect(hub.publisher.count == 0)
    }

    @Test func aUserCannotTouchAnotherUsersDevices() async throws {
        let hub = TestHub()
        let id = hub.registry.issueRegistrationId()
        let alice = try await TestHub.user("alice")
        let bob = try await TestHub.user("bob")
        try await hub.run { client async throws in
            #expect(try await client.call(.put, "/v1/registrations/\(id)", alice, body: Fixture.registration()).status == .ok)
            #expect(try await client.call(.put, "/v1/installations/alice-phone", alice, body: Fixture.installation()).status == .ok)

            #expect(try await client.call(.get, "/v1/registrations/\(id)", bob).status == .forbidden)
            #expect(try await client.call(.put, "/v1/registrations/\(id)", bob, body: Fixture.registration()).status == .forbidden)
            #expect(try await client.call(.delete, "/v1/registrations/\(id)", bob).status == .forbidden)
            #expect(try await client.call(.get, "/v1/installations/alice-phone", bob).status == .forbidden)
            #expect(try await client.call(.delete, "/v1/installations/alice-phone", bob).status == .forbidden)
            #expect(
                try await client.call(.patch, "/v1/installations/alice-phone", bob, body: #"[{"op":"add","path":"/tags","value":"X"}]"#)
                    .status == .forbidden)
            #expect(try await client.call(.get, "/v1/registrations?tag=%24UserId%3A%7Balice%7D", bob).status == .forbidden)
            let bobsList = try await client.call(.get, "/v1/registrations", bob)
            #expect(try bobsList.json()["items"]?.arrayValue?.isEmpty == true)

            #expect(try await client.call(.get, "/v1/registrations/\(id)", alice).status == .ok)
            let alicesList = try await client.call(.get, "/v1/installations", alice)
            #expect(try alicesList.json()["items"]?.arrayValue?.count == 1)
            #expect(try await client.call(.delete, "/v1/registrations/\(id)", alice).status == .noContent)
        }
        #expect(hub.registry.writes == 3)
    }

    @Test func forgedOrExpiredUserTokensAreUnauthorized() async throws {
        let forged = try await TestHub.user("alice", key: "a-guessed-key-that-is-long-enough-0000")
        let expired = try await TestHub.user("alice", expiresIn: -3600)
        try await TestHub().run { client async throws in
            let forgedResponse = try await client.call(.post, "/v1/registrationIDs", forged)
            #expect(forgedResponse.status == .unauthorized)
            #expect(forgedResponse.errorCode == "invalid_user_token")
            let expiredResponse = try await client.call(.post, "/v1/registrationIDs", expired)
            #expect(expiredResponse.status == .unauthorized)
            #expect(expiredResponse.errorCode == "token_expired")
        }
    }

    @Test(
        "a user token not valid yet, with critical header extensions, or valid for over 31 days is refused",
        arguments: [
            (
                #"{"alg":"HS256","typ":"JWT"}"#, #"{"sub":"alice","exp":\#(Self.inAnHour),"nbf":\#(Self.inAnHour - 60)}"#,
                "token_not_yet_valid"
            ),
            (#"{"alg":"HS256","typ":"JWT","crit":["exp"]}"#, #"{"sub":"alice","exp":\#(Self.inAnHour)}"#, "invalid_user_token"),
            (#"{"alg":"HS256","typ":"JWT"}"#, #"{"sub":"alice","exp":\#(Self.inAnHour + 40 * 86_400)}"#, "token_lifetime_too_long"),
            (#"{"alg":"HS256","typ":"JWT"}"#, #"{"sub":"alice","exp":\#(Self.inAnHour),"nbf":\#(Self.inAnHour - 3_610)}"#, ""),
        ])
    func userTokenTimesAndCriticalHeaders(header: String, claims: String, code: String) async throws {
        func base64URL(_ bytes: some Sequence<UInt8>) -> String {
            Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
        }
        let signingInput = base64URL(header.utf8) + "." + base64URL(claims.utf8)
        let mac = HMAC<SHA256>.authenticationCode(
            for: Data(signingInput.utf8), using: SymmetricKey(data: Data(TestHub.userTokenKey.utf8)))
        let token: HTTPFields = [.authorization: "Bearer \(signingInput).\(base64URL(mac))"]
        try await TestHub().run { client async throws in
            let response = try await client.call(.post, "/v1/registrationIDs", token)
            if code.isEmpty {
                #expect(response.status == .created, "\(response.text)")
            } else {
                #expect(response.status == .unauthorized)
                #expect(response.errorCode == code)
            }
        }
    }

    static let inAnHour = Int(Date().timeIntervalSince1970) + 3_600

    @Test("a user token must use HS256, and carry the configured audience and issuer")
    func userTokenHeaderAudienceAndIssuer() async throws {
        // alg none: the signature part is empty, the payload would be alice's.
        let header = Data(#"{"alg":"none","typ":"JWT"}"#.utf8).base64EncodedString().replacingOccurrences(of: "=", with: "")
        let payload = Data(#"{"sub":"alice","exp":4102444800}"#.utf8).base64EncodedString().replacingOccurrences(of: "=", with: "")
        let unsigned: HTTPFields = [.authorization: "Bearer \(header).\(payload)."]
        let plain = try await TestHub.user("alice")
        let scoped: HTTPFields = [
            .authorization: "Bearer "
                + (try await UserToken.make(
                    user: "alice", key: TestHub.userTokenKey, expiry: Date().addingTimeInterval(600), audience: "news-hub",
                    issuer: "https://login.example"
                ))
        ]
        try await TestHub().run { client async throws in
            let response = try await client.call(.post, "/v1/registrationIDs", unsigned)
            #expect(response.status == .unauthorized)
            #expect(response.errorCode == "invalid_user_token")
            #expect(try await client.call(.post, "/v1/registrationIDs", plain).status == .created)
        }
        var strict = TestHub()
        strict.userTokenAudience = "news-hub"
        strict.userTokenIssuer = "https://login.example"
        try await strict.run { client async throws in
            let withoutClaims = try await client.call(.post, "/v1/registrationIDs", plain)
            #expect(withoutClaims.status == .unauthorized)
            #expect(withoutClaims.errorCode == "invalid_user_token")
            #expect(try await client.call(.post, "/v1/registrationIDs", scoped).status == .created)
        }
        var otherIssuer = TestHub()
        otherIssuer.userTokenIssuer = "https://elsewhere.example"
        try await otherIssuer.run { client async throws in
            #expect(try await client.call(.post, "/v1/registrationIDs", scoped).status == .unauthorized)
        }
    }

    @Test func aBackendWithSendTargetsAUserByTag() async throws {
        let hub = TestHub()
        try await hub.run { client async throws in
            let response = try await client.call(
                .post, "/v1/notifications", TestHub.send,
                body: #"{"tags":"$UserId:{alice}","properties":{"News_English":"Your order shipped"}}"#)
            #expect(response.status == .accepted)
        }
        #expect(hub.publisher.last?.event.audience.expression?.description.contains("$UserId:{alice}") == true)
    }
}

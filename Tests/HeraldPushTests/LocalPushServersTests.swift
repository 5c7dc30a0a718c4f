import AsyncHTTPClient
import Foundation
import HeraldLocalPush
import HeraldTestSupport
import JWTKit
import NIOCore
import NIOSSL
import Testing

@Suite("local APNs and FCM servers", .heavy)
struct LocalPushServersTests {
    static let topic = "com.example.herald"
    static let deviceToken = "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90"

    // MARK: APNs

    @Test("APNs: a valid request gets 200 over HTTP/2 with its apns-id echoed, and is recorded")
    func apnsAccepts() async throws {
        try await withAPNs { server, client, key in
            let token = try await Self.providerToken(key)
            let id = UUID().uuidString
            let response = try await Self.push(client, server, providerToken: token, apnsID: id)
            #expect(response.status == 200)
            #expect(response.isHTTP2)
            #expect(response.headers["apns-id"] == id)
            #expect(response.body.isEmpty)

            let generated = try await Self.push(client, server, providerToken: token)
            #expect(generated.status == 200)
            let generatedID = try #require(generated.headers["apns-id"])
            #expect(UUID(uuidString: generatedID) != nil)
            #expect(generatedID == generatedID.uppercased())

            let requests = server.requests()
            #expect(requests.count == 2)
            #expect(requests.first?.token == Self.deviceToken)
            #expect(requests.first?.issuer == key.teamId)
            #expect(requests.first?.issuedAt != nil)
            #expect(requests.first?.header("apns-topic") == Self.topic)
            #expect(requests.first.map { String(decoding: $0.body, as: UTF8.self) } == #"{"aps":{"alert":"hello"}}"#)
            #expect(server.requestCount == 2)
            #expect(server.answered(status: 200) == 2)
            #expect(server.connectionsAccepted == 1)
            #expect(server.providerTokensVerified == 1)  // the second request hit the cache

            server.recordRequests = false
            #expect(try await Self.push(client, server, providerToken: token).status == 200)
            #expect(server.requests().count == 2)
            #expect(server.requestCount == 3)
        }
    }

    @Test("APNs: missing, invalid and expired provider tokens get the three 403s")
    func apnsProviderTokens() async throws {
        try await withAPNs { server, client, key in
            let missing = try await Self.push(client, server, providerToken: nil)
            #expect(missing.status == 403)
            #expect(missing.reason == "MissingProviderToken")

            let otherKey = LocalAPNsKey(keyId: key.keyId, teamId: key.teamId)
            let invalidSignature = try await Self.push(client, server, providerToken: try await Self.providerToken(otherKey))
            #expect(invalidSignature.status == 403)
            #expect(invalidSignature.reason == "InvalidProviderToken")

            let wrongKid = try await Self.push(client, server, providerToken: try await Self.providerToken(key, kid: "ABCDEFGHIJ"))
            #expect(wrongKid.reason == "InvalidProviderToken")

            let wrongTeam = try await Self.push(client, server, providerToken: try await Self.providerToken(key, teamId: "ZZZZZZZZZZ"))
            #expect(wrongTeam.reason == "InvalidProviderToken")

            let old = try await Self.providerToken(key, issuedAt: Date().addingTimeInterval(-2 * 3600))
            let expired = try await Self.push(client, server, providerToken: old)
            #expect(expired.status == 403)
            #expect(expired.reason == "ExpiredProviderToken")

            #expect(server.answered(status: 403) == 5)
        }
    }

    @Test("APNs: topic, device token and payload are checked")
    func apnsValidation() async throws {
        try await withAPNs { server, client, key in
            let token = try await Self.providerToken(key)
            let noTopic = try await Self.push(client, server, providerToken: token, topic: nil)
            #expect(noTopic.status == 400)
            #expect(noTopic.reason == "MissingTopic")
            #expect(try await Self.push(client, server, providerToken: token, topic: "com.other.app").reason == "TopicDisallowed")
            #expect(try await Self.push(client, server, device: "not-a-token", providerToken: token).reason == "BadDeviceToken")
            #expect(try await Self.push(client, server, providerToken: token, body: "").reason == "PayloadEmpty")
            let large = try await Self.push(client, server, providerToken: token, body: String(repeating: "x", count: 4097))
            #expect(large.status == 413)
            #expect(large.reason == "PayloadTooLarge")
        }
    }

    @Test("APNs: scripted 410 with its timestamp, 429, 503, then normal behaviour")
    func apnsScripted() async throws {
        try await withAPNs { server, client, key in
            let token = try await Self.providerToken(key)
            let unregisteredAt = Date(timeIntervalSince1970: 1_750_000_000.123)
            server.script(
                token: Self.deviceToken, [.unregistered(at: unregisteredAt), .tooManyRequests(retryAfter: 7), .serviceUnavailable])

            let gone = try await Self.push(client, server, providerToken: token)
            #expect(gone.status == 410)
            #expect(gone.reason == "Unregistered")
            #expect(gone.json?["timestamp"] as? Int == 1_750_000_000_123)

            let limited = try await Self.push(client, server, providerToken: token)
            #expect(limited.status == 429)
            #expect(limited.reason == "TooManyRequests")
            #expect(limited.headers["retry-after"] == "7")

            let unavailable = try await Self.push(client, server, providerToken: token)
            #expect(unavailable.status == 503)
            #expect(unavailable.reason == "ServiceUnavailable")

            #expect(try await Self.push(client, server, providerToken: token).status == 200)

            server.failNext(1, with: .internalServerError)
            #expect(try await Self.push(client, server, providerToken: token).status == 500)
            #expect(try await Self.push(client, server, providerToken: token).status == 200)

            let dead = "deadbeef"
            server.alwaysAnswer(token: dead, .unregistered(at: unregisteredAt))
            #expect(try await Self.push(client, server, device: dead, providerToken: token).status == 410)
            #expect(try await Self.push(client, server, device: dead, providerToken: token).status == 410)
            #expect(server.answered(status: 410) == 3)
        }
    }

    @Test("APNs: dropConnections cuts a request in flight; the next request succeeds on a new connection")
    func apnsDropConnections() async throws {
        try await withAPNs { server, client, key in
            let token = try await Self.providerToken(key)
            #expect(try await Self.push(client, server, providerToken: token).status == 200)
            #expect(server.connectionsAccepted == 1)

            // The answer waits until the connection is dropped under it, once the server has it.
            server.setDelay(.seconds(3_600))
            let inFlight = Task { try await Self.push(client, server, providerToken: token) }
            try await waitUntilTrue("the server receiving the request in flight") { server.requestCount == 2 }
            await server.dropConnections()
            await #expect(throws: (any Error).self) { try await inFlight.value }

            server.setDelay(.zero)
            // The client may still hand the request to the dead connection before it has seen
            // it close; a sender retries such a request, so does this test.
            var after = try? await Self.push(client, server, providerToken: token)
            for _ in 0..<3 where after == nil {
                try await Task.sleep(for: .milliseconds(100))
                after = try? await Self.push(client, server, providerToken: token)
            }
            let answer = try #require(after)
            #expect(answer.status == 200)
            #expect(answer.isHTTP2)
            #expect(server.connectionsAccepted == 2)
        }
    }

    @Test("APNs: many concurrent requests share one HTTP/2 connection; recording can be off")
    func apnsConcurrentStreams() async throws {
        try await withAPNs { server, client, key in
            server.recordRequests = false
            let token = try await Self.providerToken(key)
            #expect(try await Self.push(client, server, providerToken: token).status == 200)
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<500 { group.addTask { try await Self.push(client, server, providerToken: token).status } }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses.allSatisfy { $0 == 200 })
            #expect(server.answered(status: 200) == 501)
            #expect(server.requests().isEmpty)
            #expect(server.connectionsAccepted == 1)
            #expect(server.providerTokensVerified == 1)
        }
    }

    @Test("APNs: a client that does not offer h2 is refused")
    func apnsHTTP2Only() async throws {
        let authority = try LocalCertificateAuthority()
        let key = LocalAPNsKey()
        let directory = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try await LocalAPNsServer.start(authority: authority, key: key, topics: [Self.topic])
        let http1 = try Self.makeClient(authority, directory: directory, httpVersion: .http1Only)
        let token = try await Self.providerToken(key)
        await #expect(throws: (any Error).self) { try await Self.push(http1, server, providerToken: token) }
        #expect(server.requestCount == 0)
        #expect(server.connectionsAccepted >= 1)
        try await http1.shutdown()
        await server.shutdown()
    }

    // MARK: FCM

    @Test("FCM: the token exchange issues an access token that sends accept")
    func fcmTokenAndSend() async throws {
        try await withFCM { server, client, account in
            let document = try JSONSerialization.jsonObject(with: Data(account.json(tokenURI: server.tokenURI))) as? [String: Any]
            #expect(document?["type"] as? String == "service_account")
            #expect(document?["token_uri"] as? String == server.tokenURI)
            #expect((document?["private_key"] as? String)?.hasPrefix("-----BEGIN PRIVATE KEY-----") == true)

            let exchange = try await Self.exchange(client, server, account)
            #expect(exchange.status == 200)
            #expect(exchange.isHTTP2)
            let accessToken = try #require(exchange.json?["access_token"] as? String)
            #expect(exchange.json?["expires_in"] as? Int == 3600)
            #expect(exchange.json?["token_type"] as? String == "Bearer")
            #expect(server.tokensIssued == 1)

            let sent = try await Self.send(client, server, project: account.projectId, accessToken: accessToken)
            #expect(sent.status == 200)
            let name = try #require(sent.json?["name"] as? String)
            #expect(name.hasPrefix("projects/\(account.projectId)/messages/"))
            #expect(server.requests().first?.token == Self.deviceToken)
            #expect(server.answered(status: 200) == 1)

            let otherProject = try await Self.send(client, server, project: "someone-else", accessToken: accessToken)
            #expect(otherProject.status == 403)
            #expect(otherProject.googleStatus == "PERMISSION_DENIED")

            let noToken = try await Self.send(
                client, server, project: account.projectId, accessToken: accessToken, body: #"{"message":{}}"#)
            #expect(noToken.status == 400)
            #expect(noToken.googleStatus == "INVALID_ARGUMENT")
        }
    }

    @Test("FCM: a scripted UNREGISTERED answer has Google's error shape; 429 carries Retry-After")
    func fcmScripted() async throws {
        try await withFCM { server, client, account in
            let accessToken = try #require(try await Self.exchange(client, server, account).json?["access_token"] as? String)
            server.script(token: Self.deviceToken, [.unregistered, .quotaExceeded(retryAfter: 30), .unavailable, .internal])

            let gone = try await Self.send(client, server, project: account.projectId, accessToken: accessToken)
            #expect(gone.status == 404)
            let error = try #require(gone.json?["error"] as? [String: Any])
            #expect(error["code"] as? Int == 404)
            #expect(error["message"] as? String == "Requested entity was not found.")
            #expect(error["status"] as? String == "NOT_FOUND")
            let details = try #require(error["details"] as? [[String: Any]])
            #expect(details.first?["@type"] as? String == "type.googleapis.com/google.firebase.fcm.v1.FcmError")
            #expect(details.first?["errorCode"] as? String == "UNREGISTERED")

            let quota = try await Self.send(client, server, project: account.projectId, accessToken: accessToken)
            #expect(quota.status == 429)
            #expect(quota.googleStatus == "RESOURCE_EXHAUSTED")
            #expect(quota.fcmErrorCode == "QUOTA_EXCEEDED")
            #expect(quota.headers["retry-after"] == "30")

            #expect(try await Self.send(client, server, project: account.projectId, accessToken: accessToken).status == 503)
            #expect(try await Self.send(client, server, project: account.projectId, accessToken: accessToken).status == 500)
            #expect(try await Self.send(client, server, project: account.projectId, accessToken: accessToken).status == 200)
        }
    }

    @Test("FCM: after expireAccessTokens sends get 401 until a new token is fetched")
    func fcmExpiredAccessTokens() async throws {
        try await withFCM { server, client, account in
            let first = try #require(try await Self.exchange(client, server, account).json?["access_token"] as? String)
            #expect(try await Self.send(client, server, project: account.projectId, accessToken: first).status == 200)

            server.expireAccessTokens()
            let refused = try await Self.send(client, server, project: account.projectId, accessToken: first)
            #expect(refused.status == 401)
            #expect(refused.googleStatus == "UNAUTHENTICATED")
            #expect(try await Self.send(client, server, project: account.projectId, accessToken: nil).status == 401)

            let second = try #require(try await Self.exchange(client, server, account).json?["access_token"] as? String)
            #expect(second != first)
            #expect(try await Self.send(client, server, project: account.projectId, accessToken: second).status == 200)
            #expect(server.tokensIssued == 2)
        }
    }

    @Test("FCM: assertions with a wrong audience, signature, issuer, scope or lifetime are refused")
    func fcmBadAssertions() async throws {
        try await withFCM { server, client, account in
            let wrongAudience = try await Self.exchange(client, server, account, audience: "https://oauth2.googleapis.com/token")
            #expect(wrongAudience.status == 400)
            #expect(wrongAudience.json?["error"] as? String == "invalid_grant")
            #expect(wrongAudience.json?["error_description"] is String)

            let otherKey = try LocalServiceAccount(projectId: account.projectId)
            #expect(try await Self.exchange(client, server, account, signingKeyPEM: otherKey.privateKeyPEM).status == 400)
            #expect(try await Self.exchange(client, server, account, issuer: "someone@example.com").status == 400)
            #expect(try await Self.exchange(client, server, account, scope: "https://www.googleapis.com/auth/cloud-platform").status == 400)
            #expect(try await Self.exchange(client, server, account, lifetime: 7200).status == 400)
            #expect(try await Self.exchange(client, server, account, issuedAt: Date().addingTimeInterval(-7200)).status == 400)
            #expect(server.tokensIssued == 0)
            #expect(server.tokenRequestsRefused == 6)
        }
    }

    // MARK: Fixtures

    /// Runs `body` with a new APNs server, its key and a client that trusts only the test CA.
    private func withAPNs(_ body: (LocalAPNsServer, HTTPClient, LocalAPNsKey) async throws -> Void) async throws {
        let authority = try LocalCertificateAuthority()
        let key = LocalAPNsKey()
        let directory = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let keyPath = try key.write(in: directory)
        #expect(keyPath.hasSuffix("AuthKey_\(key.keyId).p8"))
        #expect(key.keyId.count == 10 && key.teamId.count == 10)
        let server = try await LocalAPNsServer.start(authority: authority, key: key, topics: [Self.topic])
        let client = try Self.makeClient(authority, directory: directory)
        do {
            try await body(server, client, key)
        } catch {
            try? await client.shutdown()
            await server.shutdown()
            throw error
        }
        try await client.shutdown()
        await server.shutdown()
    }

    /// Runs `body` with a new FCM server, its service account and a client that trusts only the test CA.
    private func withFCM(_ body: (LocalFCMServer, HTTPClient, LocalServiceAccount) async throws -> Void) async throws {
        let authority = try LocalCertificateAuthority()
        let account = try LocalServiceAccount(projectId: "herald-test-project")
        let directory = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try await LocalFCMServer.start(authority: authority, account: account)
        let client = try Self.makeClient(authority, directory: directory)
        do {
            try await body(server, client, account)
        } catch {
            try? await client.shutdown()
            await server.shutdown()
            throw error
        }
        try await client.shutdown()
        await server.shutdown()
    }

    private static func scratchDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-push-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    private static func makeClient(
        _ authority: LocalCertificateAuthority,
        directory: URL,
        httpVersion: HTTPClient.Configuration.HTTPVersion = .automatic
    ) throws -> HTTPClient {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.certificateVerification = .fullVerification
        tls.trustRoots = .file(try authority.writeCAFile(in: directory))
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls)
        configuration.httpVersion = httpVersion
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }

    // MARK: Requests

    struct Answer {
        var status: Int
        var isHTTP2: Bool
        /// Header names lowercased (HTTP/2), the last value of each.
        var headers: [String: String]
        var body: [UInt8]

        var json: [String: Any]? { try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] }
        var reason: String? { json?["reason"] as? String }
        var googleStatus: String? { (json?["error"] as? [String: Any])?["status"] as? String }
        var fcmErrorCode: String? {
            (((json?["error"] as? [String: Any])?["details"] as? [[String: Any]])?.first)?["errorCode"] as? String
        }
    }

    private static func execute(_ client: HTTPClient, _ request: HTTPClientRequest) async throws -> Answer {
        let response = try await client.execute(request, timeout: .seconds(120))
        let body = try await response.body.collect(upTo: 1 << 20)
        return Answer(
            status: Int(response.status.code),
            isHTTP2: response.version == .http2,
            headers: Dictionary(response.headers.map { ($0.name.lowercased(), $0.value) }, uniquingKeysWith: { $1 }),
            body: Array(buffer: body)
        )
    }

    struct ProviderClaims: JWTPayload {
        var iss: IssuerClaim
        var iat: IssuedAtClaim
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    /// A provider token as a Herald sender makes it: ES256 with the `.p8` key.
    private static func providerToken(
        _ key: LocalAPNsKey,
        kid: String? = nil,
        teamId: String? = nil,
        issuedAt: Date = Date()
    ) async throws -> String {
        let keys = JWTKeyCollection()
        let kid = JWKIdentifier(string: kid ?? key.keyId)
        await keys.add(ecdsa: try ES256PrivateKey(pem: key.pem), kid: kid)
        let claims = ProviderClaims(iss: IssuerClaim(value: teamId ?? key.teamId), iat: IssuedAtClaim(value: issuedAt))
        return try await keys.sign(claims, kid: kid)
    }

    private static func push(
        _ client: HTTPClient,
        _ server: LocalAPNsServer,
        device: String = deviceToken,
        providerToken: String?,
        topic: String? = LocalPushServersTests.topic,
        apnsID: String? = nil,
        body: String = #"{"aps":{"alert":"hello"}}"#
    ) async throws -> Answer {
        var request = HTTPClientRequest(url: "\(server.baseURL)/3/device/\(device)")
        request.method = .POST
        if let providerToken { request.headers.add(name: "authorization", value: "bearer \(providerToken)") }
        if let topic { request.headers.add(name: "apns-topic", value: topic) }
        if let apnsID { request.headers.add(name: "apns-id", value: apnsID) }
        request.headers.add(name: "apns-push-type", value: "alert")
        request.body = .bytes(ByteBuffer(string: body))
        return try await execute(client, request)
    }

    struct Assertion: JWTPayload {
        var iss: String
        var scope: String
        var aud: String
        var iat: Int
        var exp: Int
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    /// Exchanges an RS256 assertion for an access token, as Google's auth libraries do.
    private static func exchange(
        _ client: HTTPClient,
        _ server: LocalFCMServer,
        _ account: LocalServiceAccount,
        audience: String? = nil,
        issuer: String? = nil,
        scope: String = LocalFCMServer.messagingScope,
        issuedAt: Date = Date(),
        lifetime: Int = 3600,
        signingKeyPEM: String? = nil
    ) async throws -> Answer {
        let keys = JWTKeyCollection()
        let kid = JWKIdentifier(string: account.privateKeyId)
        await keys.add(rsa: try Insecure.RSA.PrivateKey(pem: signingKeyPEM ?? account.privateKeyPEM), digestAlgorithm: .sha256, kid: kid)
        let iat = Int(issuedAt.timeIntervalSince1970)
        let assertion = Assertion(
            iss: issuer ?? account.clientEmail,
            scope: scope,
            aud: audience ?? server.tokenURI,
            iat: iat,
            exp: iat + lifetime
        )
        let jwt = try await keys.sign(assertion, kid: kid)
        var request = HTTPClientRequest(url: server.tokenURI)
        request.method = .POST
        request.headers.add(name: "content-type", value: "application/x-www-form-urlencoded")
        request.body = .bytes(ByteBuffer(string: "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=\(jwt)"))
        return try await execute(client, request)
    }

    private static func send(
        _ client: HTTPClient,
        _ server: LocalFCMServer,
        project: String,
        accessToken: String?,
        body: String = #"{"message":{"token":"\#(deviceToken)","notification":{"title":"hello"}}}"#
    ) async throws -> Answer {
        var request = HTTPClientRequest(url: "\(server.baseURL)/v1/projects/\(project)/messages:send")
        request.method = .POST
        if let accessToken { request.headers.add(name: "authorization", value: "Bearer \(accessToken)") }
        request.headers.add(name: "content-type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: body))
        return try await execute(client, request)
    }
}

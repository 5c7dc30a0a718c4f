import Foundation
import Testing
@testable import HeraldDomain

@Suite("Installations")
struct InstallationTests {
    static let english = #"{"aps":{"alert":"$(News_English)"}}"#
    static let french = #"{"aps":{"alert":"$(News_French)"}}"#

    static var installation: Installation {
        Installation(
            installationId: "inst-1", platform: .apns, pushChannel: ModelFixtures.apnsToken,
            tags: ["World", "Science"], userId: "alice",
            templates: [
                "french": InstallationTemplate(body: french, headers: ["apns-push-type": "alert"], tags: ["Politics"]),
                "english": InstallationTemplate(body: english, expiry: "$(expiresAt)", tags: ["Sports", "World"]),
            ],
            expiresAt: ModelFixtures.date("2027-01-01T00:00:00Z")
        )
    }

    @Test("each template becomes its own registration")
    func expandsTemplates() {
        let registrations = Self.installation.registrations(version: 7)
        #expect(registrations.map(\.registrationId) == ["inst-1:english", "inst-1:french"])
        #expect(registrations[0].tags == ["World", "Science", "Sports", "$InstallationId:{inst-1}", "$UserId:{alice}"])
        #expect(registrations[1].tags == ["World", "Science", "Politics", "$InstallationId:{inst-1}", "$UserId:{alice}"])
        #expect(registrations[0].template == RegistrationTemplate(name: "english", body: Self.english, expiry: "$(expiresAt)"))
        #expect(registrations[1].template?.headers == ["apns-push-type": "alert"])
        #expect(registrations.allSatisfy { $0.version == 7 && $0.platform == .apns && $0.handle == ModelFixtures.apnsToken })
        #expect(registrations.allSatisfy { $0.expiresAt == ModelFixtures.date("2027-01-01T00:00:00Z") })
        #expect(registrations.allSatisfy { $0.validate().isEmpty })
    }

    @Test("without templates it is one native registration named after the installation")
    func nativeExpansion() {
        var installation = Self.installation
        installation.templates = [:]
        installation.userId = nil
        let registrations = installation.registrations(version: 1)
        #expect(registrations.count == 1)
        #expect(registrations.first?.registrationId == "inst-1")
        #expect(registrations.first?.template == nil)
        #expect(registrations.first?.tags == ["World", "Science", "$InstallationId:{inst-1}"])
        #expect(registrations.first?.deliveryTemplateName == "$native")
    }

    @Test("decodes Azure's shape and round-trips through Codable")
    func decodes() throws {
        let text = """
            {"installationId": "inst-1", "platform": "apns", "pushChannel": "\(ModelFixtures.apnsToken)",
             "tags": ["World", "Science"], "userId": "alice", "expiresAt": "2027-01-01T00:00:00Z",
             "templates": {
               "french": {"body": "{\\"aps\\":{\\"alert\\":\\"$(News_French)\\"}}", "headers": {"apns-push-type": "alert"}, "tags": ["Politics"]},
               "english": {"body": "{\\"aps\\":{\\"alert\\":\\"$(News_English)\\"}}", "expiry": "$(expiresAt)", "tags": ["Sports", "World"]}
             }}
            """
        let installation = try Installation.decode(ModelFixtures.bytes(text))
        #expect(installation == Self.installation)
        let again = try JSONDecoder().decode(Installation.self, from: JSONEncoder().encode(installation))
        #expect(again == installation)
    }

    @Test("every problem is reported with its field path")
    func issues() {
        let text = """
            {"installationId": "inst:1", "platform": "fcm", "pushChannel": "short",
             "tags": ["ok", "not ok"], "userId": "a b", "channel": "x",
             "templates": {
               "good": {"body": "{}", "tags": ["x", 5], "name": "good"},
               "bad name": {"body": "{\\"a\\": \\"$(p\\"}"},
               "noBody": {"headers": {"h": "v"}},
               "notObject": 3
             }}
            """
        let issues = ModelFixtures.issues { () throws(ValidationFailure) in try Installation.decode(ModelFixtures.bytes(text)) }
        let found = Set(issues.map { "\($0.field) \($0.code)" })
        #expect(
            found == [
                "installationId invalid_identifier",
                "pushChannel invalid_handle",
                "userId invalid_identifier",
                "tags[1] invalid_tag",
                "templates.good.tags[1] invalid_type",
                "templates.good.name unknown_field",
                "channel unknown_field",
                "templates.bad name invalid_identifier",
                "templates.bad name.body invalid_template",
                "templates.noBody.body missing_field",
                "templates.notObject invalid_type",
            ], "\(issues)")
    }
}

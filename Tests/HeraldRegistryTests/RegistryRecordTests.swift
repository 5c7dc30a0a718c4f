import Foundation
import HeraldDomain
import HeraldKafka
import Testing
@testable import HeraldRegistry

@Suite("Registry records, ids and hashes")
struct RegistryRecordTests {
    @Test("SipHash-2-4 matches the reference vectors")
    func sipHashVectors() {
        // Key 00 01 .. 0f; messages 00 01 .. (n-1); from the SipHash paper's test vectors.
        let k0: UInt64 = 0x0706_0504_0302_0100
        let k1: UInt64 = 0x0f0e_0d0c_0b0a_0908
        #expect(SipHash.hash([UInt8](), k0: k0, k1: k1) == 0x726f_db47_dd0e_0e31)
        #expect(SipHash.hash(Array(0..<15), k0: k0, k1: k1) == 0xa129_ca61_49be_45e5)
        #expect(SipHash.hash(Array(0..<8), k0: k0, k1: k1) == 0x93f5_f579_9a93_2462)
    }

    @Test("issued ids verify; forged, foreign and malformed ids do not")
    func issuedIds() {
        let issuer = RegistrationIdIssuer(secret: "one")
        let id = issuer.issue()
        #expect(id.count == RegistrationIdIssuer.idLength)
        #expect(issuer.isIssued(id))
        #expect(issuer.issue() != id)
        #expect(!RegistrationIdIssuer(secret: "two").isIssued(id))
        var forged = Array(id)
        forged[forged.count - 1] = forged[forged.count - 1] == "0" ? "1" : "0"
        #expect(!issuer.isIssued(String(forged)))
        var random = Array(id)
        random[0] = random[0] == "a" ? "b" : "a"
        #expect(!issuer.isIssued(String(random)))
        #expect(!issuer.isIssued(id.uppercased()))
        #expect(!issuer.isIssued(String(id.dropLast())))
        #expect(!issuer.isIssued(""))
        #expect(!issuer.isIssued(String(repeating: "0", count: RegistrationIdIssuer.idLength)))
    }

    @Test("the template content key is stable and depends on every byte")
    func templateKey() {
        let a = TemplateContentKey.of(Array(#"{"body":"x","name":"t"}"#.utf8))
        #expect(a == TemplateContentKey.of(Array(#"{"body":"x","name":"t"}"#.utf8)))
        #expect(a != TemplateContentKey.of(Array(#"{"body":"y","name":"t"}"#.utf8)))
        #expect(a.count == 32)
        #expect(TemplateContentKey.of([UInt8]()) == "e3b0c44298fc1c149afbf4c8996fb924")  // SHA-256 of nothing, first 16 bytes
    }

    @Test("a registration becomes its index entry: view, tags, template key")
    func indexedRegistration() throws {
        let expiry = Date(timeIntervalSince1970: 1_900_000_000.5)
        let registration = RegistryFixtures.registration("r1", tags: ["World", "Science", "World"], expiresAt: expiry, version: 7)
        let entry = IndexedRegistration(registration)
        #expect(entry.id == "r1")
        #expect(entry.version == 7)
        #expect(entry.tags == ["World", "Science"])
        #expect(entry.view.platform == "apns")
        #expect(entry.view.expiresAtEpochSeconds == 1_900_000_001)
        #expect(entry.view.templateName == "newsTemplate")
        #expect(entry.view.templateKey == TemplateContentKey.of(entry.templateJSON ?? []))
        #expect(entry.document == registration.jsonBytes())
        let native = IndexedRegistration(RegistryFixtures.registration("r2", tags: [], template: nil))
        #expect(native.view.isNative)
        #expect(native.templateJSON == nil)
    }

    static func changes(in hub: HubName) -> [RegistryChange] {
        var registration = RegistryFixtures.registration("r1", tags: ["A"], version: 5)
        registration.hub = hub
        var installation = Installation(installationId: "inst-1", platform: .fcm, pushChannel: "tok", tags: ["A"])
        installation.hub = hub
        return [
            .registration(IndexedRegistration(registration)),
            .registrationDeleted(id: "r1", version: 6),
            .installation(id: "inst-1", version: 9, document: StoredInstallation(installation: installation, version: 9).documentBytes()),
            .installationDeleted(id: "inst-1", version: 10),
        ]
    }

    static let records: [RegistryRecord] =
        changes(in: .default).map { RegistryRecord(change: $0) }
        + changes(in: HubName("sports")!).map { RegistryRecord(hub: HubName("sports")!, change: $0) }

    @Test("changes survive the trip through a Kafka record, in the default hub and in another", arguments: records)
    func kafkaRoundTrip(record: RegistryRecord) throws {
        let outgoing = record.outgoingMessage(topic: "t")
        let key = String(decoding: outgoing.key ?? [], as: UTF8.self)
        #expect(key.hasPrefix("sports/") == !record.hub.isDefault)
        let consumed = KafkaMessage(
            topic: "t", partition: 0, offset: 0, key: outgoing.key, value: outgoing.value, headers: outgoing.headers
        )
        #expect(try RegistryRecord(message: consumed) == record)
    }

    @Test("unreadable records are refused with a reason")
    func unreadableRecords() {
        let noKey = KafkaMessage(topic: "t", partition: 0, offset: 1, key: nil, value: Array("{}".utf8))
        #expect(throws: RegistryRecordError.self) { try RegistryRecord(message: noKey) }
        let notJSON = KafkaMessage(topic: "t", partition: 0, offset: 2, key: Array("r".utf8), value: Array("{".utf8))
        #expect(throws: RegistryRecordError.self) { try RegistryRecord(message: notJSON) }
        let otherId = RegistryFixtures.registration("r9", tags: []).jsonBytes()
        let mismatch = KafkaMessage(topic: "t", partition: 0, offset: 3, key: Array("r1".utf8), value: otherId)
        #expect(throws: RegistryRecordError.self) { try RegistryRecord(message: mismatch) }
        // A registration of the default hub under another hub's key, and a key whose hub part is no hub name.
        let r1 = RegistryFixtures.registration("r1", tags: []).jsonBytes()
        let otherHub = KafkaMessage(topic: "t", partition: 0, offset: 4, key: Array("sports/r1".utf8), value: r1)
        #expect(throws: RegistryRecordError.self) { try RegistryRecord(message: otherHub) }
        let badHub = KafkaMessage(topic: "t", partition: 0, offset: 5, key: Array("-x/r1".utf8), value: nil)
        #expect(throws: RegistryRecordError.self) { try RegistryRecord(message: badHub) }
    }

    @Test("an installation document round-trips with its version")
    func installationDocument() throws {
        let installation = Installation(
            installationId: "inst-2", platform: .apns, pushChannel: "a1b2", tags: ["World"], userId: "alice",
            templates: ["news": InstallationTemplate(body: #"{"aps":{"alert":"$(News_English)"}}"#, tags: ["Sports"])]
        )
        let stored = StoredInstallation(installation: installation, version: 42)
        let decoded = try StoredInstallation(document: stored.documentBytes())
        #expect(decoded.installation == installation)
        #expect(decoded.version == 42)
        #expect(stored.documentBytes() == decoded.documentBytes())
    }
}

import HeraldDomain
import HeraldRedis
import HeraldRegistry

/// `count` template registrations tagged World (ids `<idPrefix>0`...), written straight into the
/// index: the audience of the fault tests' broadcasts.
func seedBroadcastAudience(_ index: RegistrationIndex, count: Int, idPrefix: String) async throws {
    try await index.markBuilt()
    let template = RegistrationTemplate(name: "news", body: #"{"aps":{"alert":"$(News_English)"}}"#)
    for chunk in stride(from: 0, to: count, by: 2_000) {
        let batch = (chunk..<min(chunk + 2_000, count)).map {
            Registration(
                registrationId: "\(idPrefix)\($0)", platform: .apns, handle: String(repeating: "ab", count: 32), tags: ["World"],
                template: template, version: 1)
        }
        _ = try await index.apply(batch.map { .registration(IndexedRegistration($0)) })
    }
}

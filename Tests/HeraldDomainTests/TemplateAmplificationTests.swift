import HeraldDomain
import Testing

/// A template that copies one value many times must not turn a small event into a huge
/// record: rendering is bounded by the platform's payload limit, and registration refuses the
/// templates built to pass it.
@Suite("Template amplification")
struct TemplateAmplificationTests {
    /// The attack: 1,024 fields of `"kN":"$(msg)"` (about 16 KB).
    static let amplifyingBody: String = {
        let fields = (0..<1_024).map { #""k\#($0)":"$(msg)""# }.joined(separator: ",")
        return "{" + fields + "}"
    }()

    @Test("a rendition stops at the limit instead of building the whole payload")
    func renderingStopsAtTheLimit() throws {
        let template = try CompiledTemplate.compile(Self.amplifyingBody, format: .json)
        let properties = TemplateProperties(["msg": String(repeating: "x", count: 1_000)])
        var buffer: [UInt8] = []
        #expect(!template.render(properties, into: &buffer, limit: 4_096))
        // It stopped within one value of the limit: never the 1 MB the whole rendition would be.
        #expect(buffer.count <= 4_096 + 1_000)
        #expect(template.render(properties, limit: 4_096) == nil)
    }

    @Test("a long value is refused before it is copied")
    func longValueRefusedBeforeCopy() throws {
        let template = try CompiledTemplate.compile(#"{"a":"$(msg)"}"#, format: .json)
        var buffer: [UInt8] = []
        #expect(!template.render(TemplateProperties(["msg": String(repeating: "y", count: 1_048_576)]), into: &buffer, limit: 4_096))
        #expect(buffer.count < 4_096)
    }

    @Test(
        "a rendition that fits renders exactly as without a limit",
        arguments: [
            ##"{"aps":{"alert":"$(msg)"},"n":"#(n)","u":"%(msg)"}"##,
            ##"{"t":".(msg, 5)","c":"{$(msg) + ' - ' + $(n)}"}"##,
        ])
    func fittingRendition(body: String) throws {
        let template = try CompiledTemplate.compile(body, format: .json)
        let properties = TemplateProperties(["msg": "Fin du \"sommet\"", "n": "3"])
        let unbounded = template.render(properties)
        #expect(template.render(properties, limit: unbounded.utf8.count) == unbounded)
        #expect(template.render(properties, limit: unbounded.utf8.count - 1) == nil)
    }

    @Test("registration refuses a template that copies values too many times")
    func registrationRefusesAmplification() {
        let body = "{" + (0..<40).map { #""k\#($0)":"$(msg)""# }.joined(separator: ",") + "}"
        let registration = Registration(
            registrationId: "r1", platform: .apns, handle: ModelFixtures.apnsToken,
            template: RegistrationTemplate(name: "amp", body: body)
        )
        let issues = registration.validate()
        #expect(issues.map(\.code) == ["template_amplification"])
        #expect(issues.first?.field == "template.body")
        #expect(issues.first?.message.contains("40 times") == true)
        // Clipped copies are bounded, so they do not count.
        let clipped = "{" + (0..<40).map { #""k\#($0)":"$(msg, 10)""# }.joined(separator: ",") + "}"
        #expect(
            Registration(
                registrationId: "r1", platform: .apns, handle: ModelFixtures.apnsToken,
                template: RegistrationTemplate(name: "amp", body: clipped)
            ).validate().isEmpty)
    }

    @Test("registration refuses fixed text over the platform's payload limit")
    func registrationRefusesFixedText() {
        let body = #"{"aps":{"alert":""# + String(repeating: "x", count: 4_100) + #""}}"#
        let apns = Registration(
            registrationId: "r1", platform: .apns, handle: ModelFixtures.apnsToken,
            template: RegistrationTemplate(name: "big", body: body)
        )
        let issues = apns.validate()
        #expect(issues.map(\.code) == ["template_amplification"])
        #expect(issues.first?.message.contains("apns payload limit is 4096") == true)
        // The limit is configurable per platform.
        var limits = RegistrationLimits.default
        limits.payloadLimits.apns = 8_192
        #expect(apns.validate(limits: limits).isEmpty)
    }

    @Test("the attack template of the report is refused at registration")
    func attackTemplateRefused() {
        let registration = Registration(
            registrationId: "r1", platform: .apns, handle: ModelFixtures.apnsToken,
            template: RegistrationTemplate(name: "amp", body: Self.amplifyingBody)
        )
        #expect(registration.validate().map(\.code) == ["template_amplification", "template_amplification"])
    }
}

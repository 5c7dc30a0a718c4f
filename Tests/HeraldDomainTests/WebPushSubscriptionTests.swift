import Foundation
import Testing

@testable import HeraldDomain

/// A browser's subscription taken as the browser gives it, kept as a web push handle.
struct WebPushSubscriptionTests {
    static let p256dh = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
    static let auth = "BTBZMqHH6r4Tts7J_aSIgg"

    @Test("a registration's subscription becomes its handle, which reads back as the same subscription")
    func registrationSubscription() throws {
        let text = """
            {"registrationId": "w1", "platform": "webpush", "tags": ["World"],
             "subscription": {"endpoint": "\(ModelFixtures.webPushEndpoint)", "expirationTime": null,
                              "keys": {"p256dh": "\(Self.p256dh)", "auth": "\(Self.auth)"}}}
            """
        let registration = try Registration.decode(ModelFixtures.bytes(text))
        #expect(registration.handle == ModelFixtures.webPushHandle)
        let subscription = try WebPushSubscription.parse(handle: registration.handle).get()
        #expect(subscription.endpoint == ModelFixtures.webPushEndpoint)
        #expect(subscription.p256dh.count == 65 && subscription.auth.count == 16)
        #expect(subscription.origin == "https://fcm.googleapis.com")
        #expect(try Registration.decode(registration.jsonBytes()) == registration)
    }

    @Test(
        "a subscription that cannot be sent to is refused, naming the member",
        arguments: [
            (#""keys": {"p256dh": "BCVx", "auth": "\#(auth)"}"#, "subscription invalid_handle"),
            (#""keys": {"p256dh": "\#(p256dh)"}"#, "subscription.keys.auth missing_field"),
            (#""keys": {"p256dh": "\#(p256dh)", "auth": "\#(auth)", "extra": "x"}"#, "subscription.keys.extra unknown_field"),
            (#""keys": 3"#, "subscription.keys invalid_type"),
        ])
    func refusedSubscriptions(keys: String, expected: String) {
        let text = """
            {"registrationId": "w1", "platform": "webpush", "subscription": {"endpoint": "\(ModelFixtures.webPushEndpoint)", \(keys)}}
            """
        let issues = ModelFixtures.issues { () throws(ValidationFailure) in try Registration.decode(ModelFixtures.bytes(text)) }
        #expect(issues.map { "\($0.field) \($0.code)" } == [expected], "\(issues)")
    }

    @Test("a subscription beside a handle, or on another platform, is refused")
    func misplacedSubscription() {
        let subscription =
            #"{"endpoint": "\#(ModelFixtures.webPushEndpoint)", "keys": {"p256dh": "\#(Self.p256dh)", "auth": "\#(Self.auth)"}}"#
        for (text, expected) in [
            (
                #"{"registrationId": "w1", "platform": "webpush", "handle": "\#(ModelFixtures.webPushHandle)", "subscription": \#(subscription)}"#,
                "not both"
            ),
            (#"{"registrationId": "w1", "platform": "fcm", "subscription": \#(subscription)}"#, "this registration is for fcm"),
        ] {
            let issues = ModelFixtures.issues { () throws(ValidationFailure) in try Registration.decode(ModelFixtures.bytes(text)) }
            #expect(issues.count == 1 && issues[0].message.contains(expected), "\(issues)")
        }
    }

    @Test("an installation's pushChannel may be Azure's browser object or the browser's own")
    func installationChannel() throws {
        for channel in [
            #"{"endpoint": "\#(ModelFixtures.webPushEndpoint)", "p256dh": "\#(Self.p256dh)", "auth": "\#(Self.auth)"}"#,
            #"{"endpoint": "\#(ModelFixtures.webPushEndpoint)", "keys": {"p256dh": "\#(Self.p256dh)", "auth": "\#(Self.auth)"}}"#,
        ] {
            let text = #"{"installationId": "i1", "platform": "webpush", "pushChannel": \#(channel)}"#
            let installation = try Installation.decode(ModelFixtures.bytes(text))
            #expect(installation.pushChannel == ModelFixtures.webPushHandle)
        }
        let apns =
            #"{"installationId": "i1", "platform": "apns", "pushChannel": {"endpoint": "\#(ModelFixtures.webPushEndpoint)", "p256dh": "\#(Self.p256dh)", "auth": "\#(Self.auth)"}}"#
        let issues = ModelFixtures.issues { () throws(ValidationFailure) in try Installation.decode(ModelFixtures.bytes(apns)) }
        #expect(issues.map(\.field) == ["pushChannel"], "\(issues)")
    }
}

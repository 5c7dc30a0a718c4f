import Foundation
import HeraldDomain
import HeraldApp
/// The devices of the seed tutorials, as the demo registers them.
struct DemoDevice {
    enum Registrar: Sendable {
        /// The device registers itself with a Listen token (breaking-news tutorials).
        case device
        /// An authenticated app backend registers it for a user (notify-users tutorial).
        case user(String)
    }

    var name: String
    var platform: String
    /// Empty for a browser, which registers with its `subscription` instead.
    var handle: String
    var tags: [String]
    /// nil: a native registration that receives the event's `native` payload.
    var template: [String: Any]?
    var registrar: Registrar = .device
    /// A browser's subscription as `PushSubscription.toJSON()` gives it (Web Push).
    var subscription: [String: any Sendable]?
    /// `liveActivity` or `pushToStart` for those APNs tokens; nil for a device's.
    var tokenKind: String?
}

enum DemoDevices {
    static let categories = ["World", "Politics", "Business", "Technology", "Science", "Sports"]

    /// The localized template of the seed: `{"aps":{"alert":"$(News_<Lang>)"},"inAppMessage":"$(News_<Lang>)"}`.
    static func apnsNews(_ language: String) -> [String: Any] {
        [
            "name": "newsTemplate",
            "body": #"{"aps":{"alert":"$(News_\#(language))"},"inAppMessage":"$(News_\#(language))"}"#,
            "headers": ["apns-push-type": "alert"],
        ]
    }

    /// The FCM HTTP v1 equivalent.
    static func fcmNews(_ language: String) -> [String: Any] {
        [
            "name": "newsTemplate",
            "body":
                #"{"message":{"notification":{"title":"Breaking news","body":"$(News_\#(language))"},"data":{"inAppMessage":"$(News_\#(language))"}}}"#,
        ]
    }

    /// A page's service worker shows `title` and `body` of the JSON it receives.
    static func webPushNews(_ language: String) -> [String: Any] {
        ["name": "newsTemplate", "body": #"{"title":"Breaking news","body":"$(News_\#(language))"}"#]
    }

    /// A Windows toast with the localized headline.
    static func wnsNews(_ language: String) -> [String: Any] {
        [
            "name": "newsTemplate",
            "body":
                #"<toast><visual><binding template="ToastGeneric"><text>Breaking news</text><text>$(News_\#(language))</text></binding></visual></toast>"#,
        ]
    }

    /// The reader's Windows PC, with a channel on the local WNS server.
    static func windows(channel: String) -> DemoDevice {
        DemoDevice(
            name: "Ana's Windows PC (French, WNS toast)", platform: "wns", handle: channel, tags: ["World", "Business"],
            template: wnsNews("French"))
    }

    static let browserName = "Noor's browser (English, Web Push)"

    /// The reader's browser, subscribed on the local Web Push service.
    static func browser(subscription: [String: any Sendable]) -> DemoDevice {
        DemoDevice(
            name: browserName, platform: "webpush", handle: "", tags: ["World", "Science"],
            template: webPushNews("English"), subscription: subscription)
    }

    static func apnsHandle(_ seed: Int) -> String {
        String(repeating: String(format: "%02x", seed & 0xff), count: 32)
    }

    static func fcmHandle(_ name: String) -> String {
        "demo-\(name):APA91b" + String(repeating: "Q7x", count: 40)
    }

    static var all: [DemoDevice] {
        [
            DemoDevice(
                name: "Kenji's iPhone (English)", platform: "apns", handle: apnsHandle(0x11),
                tags: ["World", "Politics", "Technology"], template: apnsNews("English")),
            DemoDevice(
                name: "Amélie's iPad (French)", platform: "apns", handle: apnsHandle(0x22),
                tags: ["World", "Science", "Sports"], template: apnsNews("French")),
            DemoDevice(
                name: "Wei's iPhone (Mandarin)", platform: "apns", handle: apnsHandle(0x33),
                tags: ["Business", "Technology", "World"], template: apnsNews("Mandarin")),
            DemoDevice(
                name: "Léa's Android (French)", platform: "fcm", handle: fcmHandle("lea"),
                tags: ["Politics", "Business"], template: fcmNews("French")),
            DemoDevice(
                name: "Sam's Android (English)", platform: "fcm", handle: fcmHandle("sam"),
                tags: ["Sports", "Science"], template: fcmNews("English")),
            DemoDevice(
                name: "Newsroom test iPhone (native payload)", platform: "apns", handle: apnsHandle(0x44),
                tags: categories, template: nil),
            DemoDevice(
                name: "Alice's iPhone (registered by the app backend)", platform: "apns", handle: apnsHandle(0x55),
                tags: ["Technology"], template: apnsNews("English"), registrar: .user("alice")),
            DemoDevice(
                name: "Events iPhone (iOS 8 actionable invitations)", platform: "apns", handle: apnsHandle(0x66),
                tags: ["Invitations"],
                template: [
                    "name": "inviteTemplate",
                    "body": #"{"aps":{"alert":"$(Invitation_English)","category":"INVITE_CATEGORY"}}"#,
                    "headers": ["apns-push-type": "alert"],
                ]),
            // A locale's fallbacks: the newsroom writes no Canadian French, so French, else English.
            DemoDevice(
                name: "Marc's iPhone (Canadian French)", platform: "apns", handle: apnsHandle(0x88), tags: ["Science"],
                template: [
                    "name": "newsTemplate", "body": #"{"aps":{"alert":"$(News_French_CA | News_French | News_English)"}}"#,
                    "headers": ["apns-push-type": "alert"],
                ]),
            // No translation at all: its alert would be an empty banner, so it is not pushed (empty_alert).
            DemoDevice(
                name: "Worf's iPhone (Klingon, never translated)", platform: "apns", handle: apnsHandle(0x99), tags: ["Science"],
                template: apnsNews("Klingon")),
            DemoDevice(
                name: "Live Activity of the final (an iPhone's lock screen)", platform: "apns", handle: apnsHandle(0x77),
                tags: ["Match_Final"],
                template: nil, tokenKind: "liveActivity"),
        ]
    }
}

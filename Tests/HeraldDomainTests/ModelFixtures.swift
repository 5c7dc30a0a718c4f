import Foundation
@testable import HeraldDomain

/// Documents and values shared by the model tests. The JSON texts are the examples from
/// the contracts in docs/topics.md and docs/api.md, verbatim.
enum ModelFixtures {
    static let apnsToken = String(repeating: "a1b2c3d4", count: 8)
    static let fcmToken =
        "fKq3Zc1dQ0e2bXy7:APA91bH8sN3xJv0yq7c0Wc2rY9pQmL6kT4uVbN5zS1aD8fG3hJ2kL0pO9iU7yT6rE5wQ4eR3tY2uI1oP0aS9dF8gH7jK6lZ5xC4vB3nM2"
    static let wnsChannel = "https://db5.notify.windows.com/?token=AwYAAAB%2bHNpUhO2bXDS0o2Q%3d"
    static let webPushEndpoint = "https://fcm.googleapis.com/fcm/send/dQw4w9WgXcQ:APA91bFoo"
    /// The browser's key and secret of RFC 8291's Appendix A.
    static let webPushKeys =
        "p256dh=BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4&auth=BTBZMqHH6r4Tts7J_aSIgg"
    static let webPushHandle = webPushEndpoint + "#" + webPushKeys

    static let contractEvent = #"""
        {
          "id": "bn-2026-11-21-0001",
          "tags": "(World || Politics) && !Sports",
          "properties": {"News_English": "Summit ends", "News_French": "Fin du sommet", "News_Mandarin": "峰会结束"},
          "native": {"apns": {"aps": {"alert": "Summit ends", "category": "NEWS_CATEGORY"}}},
          "templates": ["newsTemplate"],
          "expiresAt": "2026-11-21T19:00:00Z",
          "priority": "high",
          "collapseId": "summit"
        }
        """#

    static let contractRegistration = #"""
        {
          "registrationId": "7f3c2a",
          "platform": "apns",
          "handle": "a1b2c3...",
          "tags": ["World", "Science", "$UserId:{alice}"],
          "template": {"name": "newsTemplate",
                       "body": "{\"aps\":{\"alert\":\"$(News_French)\"},\"inAppMessage\":\"$(News_French)\"}",
                       "headers": {"apns-push-type": "alert"}, "expiry": "$(expiresAt)"},
          "expiresAt": null,
          "version": 3
        }
        """#

    static let contractDelivery = #"""
        {
          "deliveryId": "bn-2026-11-21-0001/7f3c2a/newsTemplate",
          "eventId": "bn-2026-11-21-0001",
          "registrationId": "7f3c2a",
          "platform": "apns",
          "handle": "a1b2c3...",
          "template": "newsTemplate",
          "payload": "{\"aps\":{\"alert\":\"Fin du sommet\"},\"inAppMessage\":\"Fin du sommet\"}",
          "headers": {"apns-push-type": "alert", "apns-priority": "10", "apns-collapse-id": "summit"},
          "expiresAt": "2026-11-21T19:00:00Z",
          "publishedAt": "2026-11-21T18:00:00.120Z",
          "renderedAt": "2026-11-21T18:00:00.131Z"
        }
        """#

    /// `text` without insignificant whitespace, members kept in order.
    static func minified(_ text: String) throws -> String {
        try JSONValue.parse(text).compactText()
    }

    static func date(_ text: String) -> Date {
        guard let date = ISO8601Timestamp.parse(text) else { fatalError("bad fixture timestamp \(text)") }
        return date
    }

    /// The issues a failing decode reports, or `[]` when it succeeds.
    static func issues<T>(_ decode: () throws(ValidationFailure) -> T) -> [ValidationIssue] {
        do {
            _ = try decode()
            return []
        } catch {
            return error.issues
        }
    }

    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }
}

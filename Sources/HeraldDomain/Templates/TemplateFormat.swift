/// The syntax a template body is written in, which decides where expressions may stand and
/// how substituted values are escaped.
public enum TemplateFormat: String, Sendable, Codable, CaseIterable {
    /// A JSON document (APNs, FCM, web push). Expressions stand inside string values.
    case json
    /// An XML document (WNS toast and tile). Expressions stand in text and attribute values.
    case xml
    /// Plain text: header values such as `apns-push-type` or `X-WNS-Type`, and the expiry
    /// template. The whole body is one value.
    case text
}

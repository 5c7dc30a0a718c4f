/// A push service Herald delivers through. Encoded as its raw value on every topic.
public enum Platform: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    /// Apple Push Notification service; handle = device token (hex).
    case apns
    /// Firebase Cloud Messaging (HTTP v1 message JSON); handle = registration token.
    case fcm
    /// Windows Push Notification Services; handle = channel URI.
    case wns
    /// Web Push (RFC 8030); handle = push subscription endpoint URL.
    case webpush

    public var description: String { rawValue }

    /// The body format of this platform's templates: WNS toasts are XML, the others JSON.
    public var templateFormat: TemplateFormat {
        self == .wns ? .xml : .json
    }

    static func unknownIssue(field: String, text: String) -> ValidationIssue {
        ValidationIssue(
            field: field, code: ValidationIssue.Code.unknownPlatform,
            message: "unknown platform \"\(text)\"; expected one of \(allCases.map(\.rawValue).joined(separator: ", "))"
        )
    }
}

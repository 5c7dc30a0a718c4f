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

/// The largest payload each push service accepts, in bytes of the rendered body.
///
/// Rendering stops as soon as a payload passes its platform's limit, so one hostile template
/// or property can never make a record bigger than this (plus the record's envelope). The
/// defaults are the services' published limits for ordinary notifications: APNs 4 KB, FCM
/// 4 KB of message data, WNS 5 KB, Web Push 3,993 bytes (what one encrypted record of the
/// 4,096 bytes every push service must accept holds, RFC 8291 §4).
public struct PayloadLimits: Sendable, Hashable {
    public var apns: Int
    public var fcm: Int
    public var wns: Int
    public var webpush: Int

    public init(apns: Int = 4_096, fcm: Int = 4_096, wns: Int = 5_120, webpush: Int = 3_993) {
        self.apns = apns
        self.fcm = fcm
        self.wns = wns
        self.webpush = webpush
    }

    public subscript(platform: Platform) -> Int {
        switch platform {
        case .apns: apns
        case .fcm: fcm
        case .wns: wns
        case .webpush: webpush
        }
    }

    /// The largest of the four: bounds any rendition whatever its platform.
    public var largest: Int { max(apns, fcm, wns, webpush) }

    /// Each limit lowered to `bytes` where it is larger (a hub's `maxPayloadBytes`); nil: as is.
    public func capped(at bytes: Int?) -> PayloadLimits {
        guard let bytes else { return self }
        return PayloadLimits(apns: min(apns, bytes), fcm: min(fcm, bytes), wns: min(wns, bytes), webpush: min(webpush, bytes))
    }

    public static let `default` = PayloadLimits()
}

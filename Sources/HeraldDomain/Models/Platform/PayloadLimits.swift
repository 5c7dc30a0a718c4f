/// The largest payload each push service accepts, in bytes of the rendered body.
///
/// Rendering stops as soon as a payload passes its platform's limit, so one hostile template
/// or property can never make a record bigger than this (plus the record's envelope). The
/// defaults are the services' published limits for ordinary notifications: APNs 4 KB, FCM
/// 4 KB of message data, WNS 5 KB, Web Push about 4 KB after encryption overhead.
public struct PayloadLimits: Sendable, Hashable {
    public var apns: Int
    public var fcm: Int
    public var wns: Int
    public var webpush: Int

    public init(apns: Int = 4_096, fcm: Int = 4_096, wns: Int = 5_120, webpush: Int = 4_096) {
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

    public static let `default` = PayloadLimits()
}

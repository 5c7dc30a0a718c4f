/// Whether a rendered payload asks the device to show an alert and has nothing to show in it:
/// an APNs `aps.alert` whose title, subtitle and body are all blank, an FCM
/// `message.notification` without title and body, a declarative Web Push `notification`
/// without a title, a WNS toast whose texts are all blank. Such a rendition (every property its
/// alert reads missing from the event) is skipped as `empty_alert`, never pushed: a reader
/// would see an empty banner. Silent and data pushes (no alert at all) are not empty alerts.
public enum EmptyAlert {
    /// The skip reason.
    public static let reason = "empty_alert"

    public static func check(platform: Platform, payload: [UInt8]) -> Bool {
        if platform == .wns { return isEmptyToast(payload) }
        guard let root = try? JSONValue.parse(payload) else { return false }
        switch platform {
        case .apns:
            switch root["aps"]?["alert"] {
            case .string(let text)?: return isBlank(text)
            case let alert?:
                let localized = ["title-loc-key", "subtitle-loc-key", "loc-key"].contains { alert[$0] != nil }
                return !localized && ["title", "subtitle", "body"].allSatisfy { isBlank(alert[$0]) }
            case nil: return false
            }
        case .fcm:
            guard let notification = root["message"]?["notification"] ?? root["notification"] else { return false }
            return notification["image"] == nil && ["title", "body"].allSatisfy { isBlank(notification[$0]) }
        case .webpush:
            guard let notification = root["notification"], case .object = notification else { return false }
            return isBlank(notification["title"]) && isBlank(notification["body"])
        case .wns:
            return false
        }
    }

    private static func isBlank(_ value: JSONValue?) -> Bool {
        switch value {
        case nil, .null?: true
        case .string(let text)?: isBlank(text)
        default: false
        }
    }

    private static func isBlank(_ text: some StringProtocol) -> Bool { text.allSatisfy(\.isWhitespace) }

    /// A `<toast>` whose `<text>` elements, if it has any, are all blank (tiles, badges and raw
    /// notifications are not alerts with text).
    static func isEmptyToast(_ payload: [UInt8]) -> Bool {
        let xml = String(decoding: payload, as: UTF8.self)
        guard let toast = xml.range(of: "<toast") else { return false }
        var texts = 0
        var rest = xml[toast.upperBound...]
        while let open = rest.range(of: "<text") {
            rest = rest[open.upperBound...]
            // `<text>`, `<text id="1">`, `<text/>`; not `<textbox>`.
            guard let next = rest.first, next == ">" || next == "/" || next.isWhitespace else { continue }
            guard let end = rest.firstIndex(of: ">") else { return false }
            texts += 1
            let tag = rest[..<end]
            rest = rest[rest.index(after: end)...]
            if tag.last == "/" { continue }
            guard let close = rest.range(of: "</text>") else { return false }
            if !isBlank(rest[..<close.lowerBound]) { return false }
            rest = rest[close.upperBound...]
        }
        return texts > 0
    }
}

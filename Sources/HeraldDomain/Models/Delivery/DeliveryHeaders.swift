import Foundation

/// The platform headers of one delivery, in a fixed order: the headers Herald derives
/// from the event first, then the registration's own header templates sorted by name.
///
/// Order matters only for byte-identical output (the delivery encoder writes them in
/// this order); two header lists with the same fields in another order are equal, since
/// HTTP gives header order no meaning and JSON decoders do not report member order.
public struct DeliveryHeaders: Sendable, Sequence, ExpressibleByDictionaryLiteral {
    public struct Field: Sendable, Hashable {
        public var name: String
        public var value: String

        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    public private(set) var fields: [Field]

    public init(_ fields: [Field] = []) {
        self.fields = fields
    }

    public init(dictionaryLiteral elements: (String, String)...) {
        fields = elements.map { Field(name: $0.0, value: $0.1) }
    }

    /// The value of the first field named `name` (case-insensitively), or `nil`.
    public subscript(name: String) -> String? {
        fields.first { $0.name.caseInsensitiveEquals(name) }?.value
    }

    public mutating func append(name: String, value: String) {
        fields.append(Field(name: name, value: value))
    }

    public var count: Int { fields.count }
    public var isEmpty: Bool { fields.isEmpty }

    public func makeIterator() -> IndexingIterator<[Field]> {
        fields.makeIterator()
    }
}

extension DeliveryHeaders: Hashable {
    public static func == (lhs: DeliveryHeaders, rhs: DeliveryHeaders) -> Bool {
        lhs.fields.count == rhs.fields.count && Set(lhs.fields) == Set(rhs.fields)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(Set(fields))
    }
}

extension String {
    /// ASCII case-insensitive comparison, which is what HTTP header names need.
    func caseInsensitiveEquals(_ other: String) -> Bool {
        guard utf8.count == other.utf8.count else { return false }
        return zip(utf8, other.utf8).allSatisfy { lhs, rhs in
            lhs == rhs || (lhs | 0x20 == rhs | 0x20 && (lhs | 0x20) >= UInt8(ascii: "a") && (lhs | 0x20) <= UInt8(ascii: "z"))
        }
    }
}

extension DeliveryHeaders {
    /// The web push TTL used when the event has no `expiresAt`: RFC 8030 requires a TTL
    /// header, and four weeks matches FCM's default retention.
    public static let defaultWebPushTTLSeconds: Int64 = 2_419_200

    /// The longest TTL each service keeps a message: FCM 28 days (its documented maximum),
    /// WNS 30 days, web push 28 days (what the big push services keep; RFC 8030 lets them
    /// shorten it). A later `expiresAt` is capped, and the record's headers say the capped value.
    public static let maximumTTLSeconds: [Platform: Int64] = [.fcm: 2_419_200, .wns: 2_592_000, .webpush: 2_419_200]

    /// Builds the platform headers for one delivery. Pure: `now` is the render time, used
    /// to turn `expiresAt` into the relative TTLs that FCM, WNS and web push expect.
    ///
    /// Rule of precedence: what the *event* says (priority, expiry, collapse id) wins over
    /// a registration header template of the same name, because the newsroom decides per
    /// send; the *registration* decides the notification kind (`apns-push-type`,
    /// `X-WNS-Type`), where Herald only fills in a default. Every other header template is
    /// passed through after the derived ones, sorted by name.
    ///
    /// The replace headers (`apns-collapse-id`, `fcm-tag`, `X-WNS-Tag`, `Topic`) carry the
    /// collapse id, else the registration's header template, else `replaceKey` (the event's
    /// ``NotificationEvent/replaceKey``, so a correction can replace any alert in place); a value
    /// that does not fit the platform's rule is replaced by its 16-hex-digit hash
    /// (``fittedReplaceKey(_:fits:)``), the same for the original and its correction.
    ///
    /// - APNs: `apns-push-type` (default `alert`), `apns-priority` (`10` high, `5` normal;
    ///   without a priority `10` for alerts, Apple's default, so iOS does not hold breaking
    ///   news; always `5` for `background` pushes, which APNs requires), `apns-expiration`
    ///   (epoch seconds of `expiresAt`), `apns-collapse-id` (at most 64 bytes).
    /// - FCM: `fcm-priority` (`high`/`normal`, the HTTP v1 Android priority; default normal),
    ///   `fcm-ttl` (`"<seconds>s"`, the HTTP v1 duration format, at most 28 days),
    ///   `fcm-collapse-key` (only the event's collapse id: FCM keeps at most four collapse keys
    ///   per device), `fcm-tag` (the Android notification's `tag`: a notification with the same
    ///   tag replaces the one shown).
    /// - WNS: `X-WNS-Type` (default `wns/toast` for XML bodies, `wns/raw` otherwise),
    ///   `X-WNS-TTL` (seconds, at most 30 days), `X-WNS-Tag` (at most 16 characters: a toast or
    ///   tile with the same tag replaces the earlier one), `X-WNS-Group` (the collapse id, fitted
    ///   as the tag: a toast replaces the one of the same tag in the same group).
    /// - Web push: `Urgency` (`high`/`normal`), `TTL` (seconds, default
    ///   ``defaultWebPushTTLSeconds``, at most 28 days), `Topic` (RFC 8030's 32 URL-safe base64
    ///   characters at most).
    public static func forDelivery(
        platform: Platform, priority: NotificationPriority?, expiresAt: Date?, collapseId: String?, replaceKey: String? = nil,
        templateHeaders: [String: String], bodyFormat: TemplateFormat, now: Date
    ) -> DeliveryHeaders {
        var headers = DeliveryHeaders()
        var derivedNames: [String] = []
        func derive(_ name: String, _ value: String?) {
            derivedNames.append(name)
            if let value { headers.append(name: name, value: value) }
        }
        func template(_ name: String) -> String? {
            templateHeaders.first { $0.key.caseInsensitiveEquals(name) }?.value
        }
        func replace(_ templated: String?, fits: (String) -> Bool) -> String? {
            (collapseId ?? templated ?? replaceKey).map { fittedReplaceKey($0, fits: fits) }
        }
        func ttlSeconds(_ expiresAt: Date) -> Int64 {
            let seconds = Swift.max(0, Int64(Swift.min(expiresAt.timeIntervalSince(now), 1e15).rounded(.down)))
            return Swift.min(seconds, maximumTTLSeconds[platform] ?? seconds)
        }

        switch platform {
        case .apns:
            let pushType = template("apns-push-type") ?? "alert"
            derive("apns-push-type", pushType)
            derive("apns-priority", pushType != "background" && (priority ?? .high) == .high ? "10" : "5")
            derive(
                "apns-expiration", expiresAt.map { String(Int64($0.timeIntervalSince1970.rounded(.down))) } ?? template("apns-expiration"))
            derive("apns-collapse-id", replace(template("apns-collapse-id"), fits: { $0.utf8.count <= 64 }))
        case .fcm:
            derive("fcm-priority", (priority ?? .normal).rawValue)
            derive("fcm-ttl", expiresAt.map { "\(ttlSeconds($0))s" } ?? template("fcm-ttl"))
            derive("fcm-collapse-key", collapseId ?? template("fcm-collapse-key"))
            derive("fcm-tag", replace(template("fcm-tag"), fits: { $0.utf8.count <= 64 }))
        case .wns:
            derive("X-WNS-Type", template("X-WNS-Type") ?? (bodyFormat == .xml ? "wns/toast" : "wns/raw"))
            derive("X-WNS-TTL", expiresAt.map { String(ttlSeconds($0)) } ?? template("X-WNS-TTL"))
            derive("X-WNS-Tag", replace(template("X-WNS-Tag"), fits: isWNSTag))
            // The group names the publisher's set of alerts (its collapse id), not one alert: the
            // replace key is not a group.
            derive("X-WNS-Group", template("X-WNS-Group") ?? collapseId.map { fittedReplaceKey($0, fits: isWNSTag) })
        case .webpush:
            derive("Urgency", (priority ?? .normal).rawValue)
            derive("TTL", expiresAt.map { String(ttlSeconds($0)) } ?? template("TTL") ?? String(defaultWebPushTTLSeconds))
            derive("Topic", replace(template("Topic"), fits: isWebPushTopic))
        }
        for (name, value) in templateHeaders.sorted(by: { $0.key < $1.key })
        where !derivedNames.contains(where: { $0.caseInsensitiveEquals(name) }) {
            headers.append(name: name, value: value)
        }
        return headers
    }

    /// ``forDelivery(platform:priority:expiresAt:collapseId:replaceKey:templateHeaders:bodyFormat:now:)``
    /// with the event's priority, expiry, collapse id and replace key.
    public static func forDelivery(
        platform: Platform, event: NotificationEvent, templateHeaders: [String: String],
        bodyFormat: TemplateFormat, now: Date
    ) -> DeliveryHeaders {
        forDelivery(
            platform: platform, priority: event.priority, expiresAt: event.expiresAt, collapseId: event.collapseId,
            replaceKey: event.replaceKey, templateHeaders: templateHeaders, bodyFormat: bodyFormat, now: now
        )
    }

    /// The header that carries the replace key on `platform` (the Android notification tag is
    /// `fcm-tag` on the record).
    public static func replaceHeaderName(_ platform: Platform) -> String {
        switch platform {
        case .apns: "apns-collapse-id"
        case .fcm: "fcm-tag"
        case .wns: "X-WNS-Tag"
        case .webpush: "Topic"
        }
    }

    /// `key` when `fits` accepts it, else 16 lowercase hex digits of its 64-bit FNV-1a hash,
    /// which fit every platform's replace header: an original and its correction get the same.
    public static func fittedReplaceKey(_ key: String, fits: (String) -> Bool) -> String {
        if fits(key) { return key }
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in key.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        let digits = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// WNS takes a tag of at most 16 characters; letters, digits, `-` and `_` keep it a plain header value.
    static func isWNSTag(_ tag: String) -> Bool {
        !tag.isEmpty && tag.utf8.count <= 16
            && tag.unicodeScalars.allSatisfy { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || $0 == "-" || $0 == "_") }
    }

    static func isWebPushTopic(_ topic: String) -> Bool {
        !topic.isEmpty && topic.utf8.count <= 32
            && topic.utf8.allSatisfy { byte in
                (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                    || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                    || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                    || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
            }
    }
}

import Foundation

extension Registration {
    /// Decodes and validates an untrusted registration document (an HTTP body), reporting
    /// every problem at once: malformed JSON (with line and column), missing fields, wrong
    /// types, unknown platform, and everything ``validate(limits:)`` checks.
    ///
    /// - Parameter registrationId: the id from the URL, used when the body has none; a
    ///   body naming a different id is refused.
    /// An absent `version` decodes as 0 (the registry assigns versions).
    /// - Parameter hub: the hub from the URL; a body naming another hub is refused.
    public static func decode(
        _ bytes: some Collection<UInt8>, registrationId: String? = nil, hub: HubName = .default,
        limits: RegistrationLimits = .default
    ) throws(ValidationFailure) -> Registration {
        let root: JSONValue
        switch JSONFieldReader.parseObject(bytes, maximumBytes: limits.maxDocumentBytes, what: "the registration") {
        case .success(let value): root = value
        case .failure(let failure): throw failure
        }
        var issues: [ValidationIssue] = []
        let reader = JSONFieldReader(root)
        reader.refuseUnknownMembers(known: members, issues: &issues)
        let bodyId = reader.string("registrationId", required: registrationId == nil, issues: &issues)
        if let registrationId, let bodyId, bodyId != registrationId {
            issues.append(
                ValidationIssue(
                    field: "registrationId", code: ValidationIssue.Code.invalidValue,
                    message: "the body names registration \"\(bodyId)\" but the request is for \"\(registrationId)\""
                ))
        }
        reader.requireHub(hub, issues: &issues)
        let platform = reader.platform("platform", issues: &issues)
        // A browser's subscription may come as the browser gives it instead of as a handle.
        let hasSubscription = reader.member("subscription") != nil
        let handle =
            hasSubscription
            ? reader.webPushHandle("subscription", issues: &issues) : reader.string("handle", required: true, issues: &issues)
        if hasSubscription {
            if reader.member("handle") != nil {
                issues.append(
                    ValidationIssue(
                        field: "subscription", code: ValidationIssue.Code.invalidValue,
                        message: "a registration has a handle or a subscription, not both"))
            }
            if let platform, platform != .webpush {
                issues.append(
                    ValidationIssue(
                        field: "subscription", code: ValidationIssue.Code.invalidValue,
                        message: "a subscription is a web push browser's; this registration is for \(platform.rawValue)"))
            }
        }
        let tags = reader.stringArray("tags", required: false, issues: &issues)
        var template: RegistrationTemplate?
        if let templateReader = reader.object("template", required: false, issues: &issues) {
            template = RegistrationTemplate.read(templateReader, requireName: true, issues: &issues)
        }
        let expiresAt = reader.timestamp("expiresAt", issues: &issues)
        let version = reader.integer("version", required: false, issues: &issues)
        let timeZone = reader.string("timeZone", required: false, issues: &issues)
        let quietHours = reader.string("quietHours", required: false, issues: &issues)
        let frequencyCap = reader.integer("frequencyCap", required: false, issues: &issues)
        let tokenKind: APNsTokenKind = reader.choice("tokenKind", issues: &issues) ?? .device

        // Fields that were missing or unreadable get placeholders so the rest of the
        // document is still checked; issues about the placeholders themselves are dropped
        // (a handle cannot be judged without knowing its platform).
        var unjudged: Set<String> = []
        if registrationId ?? bodyId == nil { unjudged.insert("registrationId") }
        if platform == nil || handle == nil || (hasSubscription && platform != .webpush) {
            unjudged.insert("handle")
        }
        var registration = Registration(
            registrationId: registrationId ?? bodyId ?? "", platform: platform ?? .fcm, handle: handle ?? "",
            tags: tags ?? [], template: template, expiresAt: expiresAt, version: version ?? 0, timeZone: timeZone, hub: hub,
            tokenKind: tokenKind
        )
        registration.quietHours = quietHours
        registration.frequencyCap = frequencyCap.map { Int(clamping: $0) }
        // Fields already reported as mistyped are absent from `registration`, so nothing is
        // reported twice.
        issues += registration.validate(limits: limits).filter { !unjudged.contains($0.field) }
        if !issues.isEmpty { throw ValidationFailure(issues: issues) }
        return registration
    }

    /// The members a registration document may have (`version` is the registry's: accepted
    /// as a GET returned it and not used; If-Match is how a write names the version it expects).
    static let members: Set<String> = [
        "hub", "registrationId", "platform", "handle", "subscription", "tags", "template", "expiresAt", "version", "timeZone",
        "quietHours", "frequencyCap", "tokenKind",
    ]

    /// The registration in the contract's field order, as compact JSON.
    public func jsonBytes() -> [UInt8] {
        var bytes: [UInt8] = []
        jsonValue.write(into: &bytes)
        return bytes
    }

    /// The registration as a JSON tree in the contract's field order.
    /// `hub` (first) and `timeZone` are written only when set, so a registration of the default
    /// hub without a zone keeps the bytes it had before hubs and zones.
    public var jsonValue: JSONValue {
        var members = hub.isDefault ? [] : [JSONMember(key: "hub", value: .string(hub.rawValue))]
        members += [
            JSONMember(key: "registrationId", value: .string(registrationId)),
            JSONMember(key: "platform", value: .string(platform.rawValue)),
            JSONMember(key: "handle", value: .string(handle)),
            JSONMember(key: "tags", value: .array(tags.map(JSONValue.string))),
            JSONMember(key: "template", value: template?.jsonValue ?? .null),
            JSONMember(
                key: "expiresAt", value: expiresAt.map { .string(ISO8601Timestamp.format($0, precision: .secondsWhenExact)) } ?? .null),
        ]
        if let timeZone { members.append(JSONMember(key: "timeZone", value: .string(timeZone))) }
        if let quietHours { members.append(JSONMember(key: "quietHours", value: .string(quietHours))) }
        if let frequencyCap { members.append(JSONMember(key: "frequencyCap", value: .number(String(frequencyCap)))) }
        if tokenKind != .device { members.append(JSONMember(key: "tokenKind", value: .string(tokenKind.rawValue))) }
        members.append(JSONMember(key: "version", value: .number(String(version))))
        return .object(members)
    }
}

extension RegistrationTemplate {
    /// The template in the contract's field order; headers sorted by name.
    public var jsonValue: JSONValue {
        .object([
            JSONMember(key: "name", value: .string(name)),
            JSONMember(key: "body", value: .string(body)),
            JSONMember(
                key: "headers", value: .object(headers.sorted { $0.key < $1.key }.map { JSONMember(key: $0.key, value: .string($0.value)) })
            ),
            JSONMember(key: "expiry", value: expiry.map(JSONValue.string) ?? .null),
        ])
    }

    /// Reads a template object; `nil` when its body is missing or mistyped (issues recorded).
    static func read(_ reader: JSONFieldReader, requireName: Bool, name fixedName: String? = nil, issues: inout [ValidationIssue])
        -> RegistrationTemplate?
    {
        reader.refuseUnknownMembers(
            known: fixedName == nil ? ["name", "body", "headers", "expiry"] : ["body", "headers", "expiry", "tags"], issues: &issues)
        let name = fixedName ?? reader.string("name", required: requireName, issues: &issues)
        let body = reader.string("body", required: true, issues: &issues)
        let headers = reader.stringMap("headers", issues: &issues)
        let expiry = reader.string("expiry", required: false, issues: &issues)
        guard let name, let body else { return nil }
        return RegistrationTemplate(name: name, body: body, headers: headers ?? [:], expiry: expiry)
    }
}

/// The `herald.registrations` shape. Absent `tags` decode as none, absent `version` as 0;
/// `expiresAt` and `template` are written as `null` when unset.
extension Registration: Codable {
    enum CodingKeys: String, CodingKey {
        case hub, registrationId, platform, handle, tags, template, expiresAt, timeZone, quietHours, frequencyCap, version, tokenKind
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        hub = try container.decodeIfPresent(HubName.self, forKey: .hub) ?? .default
        registrationId = try container.decode(String.self, forKey: .registrationId)
        platform = try container.decode(Platform.self, forKey: .platform)
        handle = try container.decode(String.self, forKey: .handle)
        tags = try container.decodeIfPresent([String].self, forKey: .tags) ?? []
        template = try container.decodeIfPresent(RegistrationTemplate.self, forKey: .template)
        expiresAt = try container.decodeTimestampIfPresent(forKey: .expiresAt)
        version = try container.decodeIfPresent(Int64.self, forKey: .version) ?? 0
        timeZone = try container.decodeIfPresent(String.self, forKey: .timeZone)
        quietHours = try container.decodeIfPresent(String.self, forKey: .quietHours)
        frequencyCap = try container.decodeIfPresent(Int.self, forKey: .frequencyCap)
        tokenKind = try container.decodeIfPresent(String.self, forKey: .tokenKind).flatMap(APNsTokenKind.init(rawValue:)) ?? .device
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        if !hub.isDefault { try container.encode(hub, forKey: .hub) }
        try container.encode(registrationId, forKey: .registrationId)
        try container.encode(platform, forKey: .platform)
        try container.encode(handle, forKey: .handle)
        try container.encode(tags, forKey: .tags)
        try container.encode(template, forKey: .template)
        try container.encodeTimestamp(expiresAt, forKey: .expiresAt, precision: .secondsWhenExact)
        try container.encodeIfPresent(timeZone, forKey: .timeZone)
        try container.encodeIfPresent(quietHours, forKey: .quietHours)
        try container.encodeIfPresent(frequencyCap, forKey: .frequencyCap)
        if tokenKind != .device { try container.encode(tokenKind.rawValue, forKey: .tokenKind) }
        try container.encode(version, forKey: .version)
    }
}

extension RegistrationTemplate: Codable {
    enum CodingKeys: String, CodingKey {
        case name, body, headers, expiry
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        body = try container.decode(String.self, forKey: .body)
        headers = try container.decodeIfPresent([String: String].self, forKey: .headers) ?? [:]
        expiry = try container.decodeIfPresent(String.self, forKey: .expiry)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encode(body, forKey: .body)
        try container.encode(headers, forKey: .headers)
        try container.encode(expiry, forKey: .expiry)
    }
}

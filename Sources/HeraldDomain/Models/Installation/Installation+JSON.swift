import Foundation

extension Installation {
    /// Decodes and validates an untrusted installation document (an HTTP body), reporting
    /// every problem at once, like ``Registration/decode(_:registrationId:limits:)``.
    ///
    /// - Parameter installationId: the id from the URL, used when the body has none; a
    ///   body naming a different id is refused.
    public static func decode(
        _ bytes: some Collection<UInt8>, installationId: String? = nil, hub: HubName = .default,
        limits: RegistrationLimits = .default
    ) throws(ValidationFailure) -> Installation {
        let root: JSONValue
        switch JSONFieldReader.parseObject(bytes, maximumBytes: limits.maxDocumentBytes, what: "the installation") {
        case .success(let value): root = value
        case .failure(let failure): throw failure
        }
        var issues: [ValidationIssue] = []
        let reader = JSONFieldReader(root)
        reader.refuseUnknownMembers(known: members, issues: &issues)
        let bodyId = reader.string("installationId", required: installationId == nil, issues: &issues)
        if let installationId, let bodyId, bodyId != installationId {
            issues.append(
                ValidationIssue(
                    field: "installationId", code: ValidationIssue.Code.invalidValue,
                    message: "the body names installation \"\(bodyId)\" but the request is for \"\(installationId)\""
                ))
        }
        reader.requireHub(hub, issues: &issues)
        let platform = reader.platform("platform", issues: &issues)
        // A browser's channel is its subscription object (Azure's `endpoint`/`p256dh`/`auth`, or
        // the browser's own shape), kept as a web push handle.
        let channelIsObject: Bool
        if case .object = reader.member("pushChannel") { channelIsObject = true } else { channelIsObject = false }
        let pushChannel =
            channelIsObject
            ? reader.webPushHandle("pushChannel", issues: &issues) : reader.string("pushChannel", required: true, issues: &issues)
        if channelIsObject, let platform, platform != .webpush {
            issues.append(
                ValidationIssue(
                    field: "pushChannel", code: ValidationIssue.Code.invalidValue,
                    message: "an object pushChannel is a browser's subscription; this installation is for \(platform.rawValue)"))
        }
        let tags = reader.stringArray("tags", required: false, issues: &issues)
        let userId = reader.string("userId", required: false, issues: &issues)
        let expiresAt = reader.timestamp("expiresAt", issues: &issues)
        let timeZone = reader.string("timeZone", required: false, issues: &issues)
        let quietHours = reader.string("quietHours", required: false, issues: &issues)
        let frequencyCap = reader.integer("frequencyCap", required: false, issues: &issues)
        var templates: [String: InstallationTemplate] = [:]
        if let templatesReader = reader.object("templates", required: false, issues: &issues),
            case .object(let members) = templatesReader.value
        {
            for member in members {
                guard let templateReader = templatesReader.object(member.key, required: true, issues: &issues) else { continue }
                let template = RegistrationTemplate.read(templateReader, requireName: false, name: member.key, issues: &issues)
                let templateTags = templateReader.stringArray("tags", required: false, issues: &issues)
                if let template {
                    templates[member.key] = InstallationTemplate(
                        body: template.body, headers: template.headers, expiry: template.expiry, tags: templateTags ?? []
                    )
                }
            }
        }
        var unjudged: Set<String> = []
        if installationId ?? bodyId == nil { unjudged.insert("installationId") }
        if platform == nil || pushChannel == nil || (channelIsObject && platform != .webpush) { unjudged.insert("pushChannel") }
        var installation = Installation(
            installationId: installationId ?? bodyId ?? "", platform: platform ?? .fcm, pushChannel: pushChannel ?? "",
            tags: tags ?? [], userId: userId, templates: templates, expiresAt: expiresAt, timeZone: timeZone, hub: hub
        )
        installation.quietHours = quietHours
        installation.frequencyCap = frequencyCap.map { Int(clamping: $0) }
        issues += installation.validate(limits: limits).filter { !unjudged.contains($0.field) }
        if !issues.isEmpty { throw ValidationFailure(issues: issues) }
        return installation
    }
}

extension Installation {
    /// The members an installation document may have (`version` as for registrations).
    static let members: Set<String> = [
        "hub", "installationId", "platform", "pushChannel", "tags", "userId", "templates", "expiresAt", "timeZone", "version",
        "quietHours", "frequencyCap",
    ]
}

/// Azure's installation shape (`installationId`, `platform`, `pushChannel`, `tags`,
/// `userId`, `templates` by name), with Herald's `expiresAt`.
extension Installation: Codable {
    enum CodingKeys: String, CodingKey {
        case hub, installationId, platform, pushChannel, tags, userId, templates, expiresAt, timeZone, quietHours, frequencyCap
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        hub = try container.decodeIfPresent(HubName.self, forKey: .hub) ?? .default
        installationId = try container.decode(String.self, forKey: .installationId)
        platform = try container.decode(Platform.self, forKey: .platform)
        pushChannel = try container.decode(String.self, forKey: .pushChannel)
        tags = try container.decodeIfPresent([String].self, forKey: .tags) ?? []
        userId = try container.decodeIfPresent(String.self, forKey: .userId)
        templates = try container.decodeIfPresent([String: InstallationTemplate].self, forKey: .templates) ?? [:]
        expiresAt = try container.decodeTimestampIfPresent(forKey: .expiresAt)
        timeZone = try container.decodeIfPresent(String.self, forKey: .timeZone)
        quietHours = try container.decodeIfPresent(String.self, forKey: .quietHours)
        frequencyCap = try container.decodeIfPresent(Int.self, forKey: .frequencyCap)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        if !hub.isDefault { try container.encode(hub, forKey: .hub) }
        try container.encode(installationId, forKey: .installationId)
        try container.encode(platform, forKey: .platform)
        try container.encode(pushChannel, forKey: .pushChannel)
        try container.encode(tags, forKey: .tags)
        try container.encode(userId, forKey: .userId)
        try container.encode(templates, forKey: .templates)
        try container.encodeTimestamp(expiresAt, forKey: .expiresAt, precision: .secondsWhenExact)
        try container.encodeIfPresent(timeZone, forKey: .timeZone)
        try container.encodeIfPresent(quietHours, forKey: .quietHours)
        try container.encodeIfPresent(frequencyCap, forKey: .frequencyCap)
    }
}

extension InstallationTemplate: Codable {
    enum CodingKeys: String, CodingKey {
        case body, headers, expiry, tags
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        body = try container.decode(String.self, forKey: .body)
        headers = try container.decodeIfPresent([String: String].self, forKey: .headers) ?? [:]
        expiry = try container.decodeIfPresent(String.self, forKey: .expiry)
        tags = try container.decodeIfPresent([String].self, forKey: .tags) ?? []
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(body, forKey: .body)
        try container.encode(headers, forKey: .headers)
        try container.encode(expiry, forKey: .expiry)
        try container.encode(tags, forKey: .tags)
    }
}

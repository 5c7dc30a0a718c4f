import Foundation

/// Azure's installation shape (`installationId`, `platform`, `pushChannel`, `tags`,
/// `userId`, `templates` by name), with Herald's `expiresAt`.
extension Installation: Codable {
    enum CodingKeys: String, CodingKey {
        case installationId, platform, pushChannel, tags, userId, templates, expiresAt
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        installationId = try container.decode(String.self, forKey: .installationId)
        platform = try container.decode(Platform.self, forKey: .platform)
        pushChannel = try container.decode(String.self, forKey: .pushChannel)
        tags = try container.decodeIfPresent([String].self, forKey: .tags) ?? []
        userId = try container.decodeIfPresent(String.self, forKey: .userId)
        templates = try container.decodeIfPresent([String: InstallationTemplate].self, forKey: .templates) ?? [:]
        expiresAt = try container.decodeTimestampIfPresent(forKey: .expiresAt)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(installationId, forKey: .installationId)
        try container.encode(platform, forKey: .platform)
        try container.encode(pushChannel, forKey: .pushChannel)
        try container.encode(tags, forKey: .tags)
        try container.encode(userId, forKey: .userId)
        try container.encode(templates, forKey: .templates)
        try container.encodeTimestamp(expiresAt, forKey: .expiresAt, precision: .secondsWhenExact)
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

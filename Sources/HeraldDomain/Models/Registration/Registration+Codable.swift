import Foundation

/// The `herald.registrations` shape. Absent `tags` decode as none, absent `version` as 0;
/// `expiresAt` and `template` are written as `null` when unset.
extension Registration: Codable {
    enum CodingKeys: String, CodingKey {
        case registrationId, platform, handle, tags, template, expiresAt, version
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        registrationId = try container.decode(String.self, forKey: .registrationId)
        platform = try container.decode(Platform.self, forKey: .platform)
        handle = try container.decode(String.self, forKey: .handle)
        tags = try container.decodeIfPresent([String].self, forKey: .tags) ?? []
        template = try container.decodeIfPresent(RegistrationTemplate.self, forKey: .template)
        expiresAt = try container.decodeTimestampIfPresent(forKey: .expiresAt)
        version = try container.decodeIfPresent(Int64.self, forKey: .version) ?? 0
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(registrationId, forKey: .registrationId)
        try container.encode(platform, forKey: .platform)
        try container.encode(handle, forKey: .handle)
        try container.encode(tags, forKey: .tags)
        try container.encode(template, forKey: .template)
        try container.encodeTimestamp(expiresAt, forKey: .expiresAt, precision: .secondsWhenExact)
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

import HeraldDomain

extension Installation {
    /// The installation as the API shows it (Azure's field names), in a fixed order with
    /// templates sorted by name; `version` is added for stored installations, `hub` (first)
    /// for an installation of a hub other than the default.
    func documentJSON(version: Int64? = nil) -> JSONValue {
        var members = hub.isDefault ? [] : [JSONMember(key: "hub", value: .string(hub.rawValue))]
        members += [
            JSONMember(key: "installationId", value: .string(installationId)),
            JSONMember(key: "platform", value: .string(platform.rawValue)),
            JSONMember(key: "pushChannel", value: .string(pushChannel)),
            JSONMember(key: "tags", value: .array(tags.map(JSONValue.string))),
            JSONMember(key: "userId", value: userId.map(JSONValue.string) ?? .null),
            JSONMember(
                key: "templates",
                value: .object(
                    templates.sorted { $0.key < $1.key }.map { name, template in
                        JSONMember(
                            key: name,
                            value: .object([
                                JSONMember(key: "body", value: .string(template.body)),
                                JSONMember(
                                    key: "headers",
                                    value: .object(
                                        template.headers.sorted { $0.key < $1.key }.map {
                                            JSONMember(key: $0.key, value: .string($0.value))
                                        })),
                                JSONMember(key: "expiry", value: template.expiry.map(JSONValue.string) ?? .null),
                                JSONMember(key: "tags", value: .array(template.tags.map(JSONValue.string))),
                            ]))
                    })),
            JSONMember(
                key: "expiresAt", value: expiresAt.map { .string(ISO8601Timestamp.format($0, precision: .secondsWhenExact)) } ?? .null),
        ]
        if let timeZone { members.append(JSONMember(key: "timeZone", value: .string(timeZone))) }
        if let quietHours { members.append(JSONMember(key: "quietHours", value: .string(quietHours))) }
        if let frequencyCap { members.append(JSONMember(key: "frequencyCap", value: .number(String(frequencyCap)))) }
        if let version { members.append(JSONMember(key: "version", value: .number(String(version)))) }
        return .object(members)
    }

    /// Every tag a registration of this installation could carry, by field path, for the
    /// reserved-tag rules.
    var taggedFields: [(field: String, tags: [String])] {
        [("tags", tags)] + templates.sorted { $0.key < $1.key }.map { ("templates.\($0.key).tags", $0.value.tags) }
    }

    /// Reserved (`$`) tags and the user tag this installation already holds.
    var reservedTags: Set<String> {
        var reserved = Set(taggedFields.flatMap(\.tags).filter { $0.hasPrefix("$") })
        if let userTag { reserved.insert(userTag) }
        return reserved
    }
}

extension StoredInstallation {
    var documentJSON: JSONValue { installation.documentJSON(version: version) }
}

extension Installation {
    /// The system tag every registration of this installation carries.
    public var installationTag: String { "$InstallationId:{\(installationId)}" }

    /// The system tag for ``userId``, if set.
    public var userTag: String? { userId.map { "$UserId:{\($0)}" } }

    /// The registration id of the template `name`: `<installationId>:<name>`.
    public static func registrationId(installationId: String, templateName: String) -> String {
        "\(installationId):\(templateName)"
    }

    /// The registrations this installation stands for, sorted by id.
    ///
    /// Each template becomes one registration with id `<installationId>:<templateName>` and
    /// tags = installation tags + template tags + `$InstallationId:{id}` (+ `$UserId:{user}`),
    /// so an expression can address one template of a device (`Sports && $InstallationId:{x}`).
    /// An installation without templates becomes one native registration whose id is the
    /// installation id. Duplicate tags are dropped, keeping first occurrences.
    public func registrations(version: Int64) -> [Registration] {
        var systemTags = [installationTag]
        if let userTag { systemTags.append(userTag) }
        guard !templates.isEmpty else {
            var registration = Registration(
                registrationId: installationId, platform: platform, handle: pushChannel,
                tags: Self.uniqued(tags + systemTags), template: nil, expiresAt: expiresAt, version: version,
                timeZone: timeZone, hub: hub
            )
            registration.quietHours = quietHours
            registration.frequencyCap = frequencyCap
            return [registration]
        }
        return templates.sorted { $0.key < $1.key }.map { name, template in
            var registration = Registration(
                registrationId: Self.registrationId(installationId: installationId, templateName: name),
                platform: platform, handle: pushChannel,
                tags: Self.uniqued(tags + template.tags + systemTags),
                template: RegistrationTemplate(name: name, body: template.body, headers: template.headers, expiry: template.expiry),
                expiresAt: expiresAt, version: version, timeZone: timeZone, hub: hub
            )
            registration.quietHours = quietHours
            registration.frequencyCap = frequencyCap
            return registration
        }
    }

    static func uniqued(_ tags: [String]) -> [String] {
        var seen = Set<String>()
        return tags.filter { seen.insert($0).inserted }
    }
}

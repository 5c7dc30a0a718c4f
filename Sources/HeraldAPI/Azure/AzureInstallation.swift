import HeraldDomain

/// Azure Notification Hubs' installation JSON and Herald's: the same document but for the
/// platform names (`apns`, `fcmv1` and `gcm` for FCM, `wns`, `browser`; Herald's `apns`, `fcm`,
/// `wns`, `webpush`), `expirationTime` (Herald's `expiresAt`), a browser's `pushChannel` (an
/// object there, a handle here) and the fields only Azure's service writes.
enum AzureInstallation {
    /// Azure's platform names Herald sends to, and Herald's name for each.
    static let platforms: [String: Platform] = ["apns": .apns, "fcmv1": .fcm, "gcm": .fcm, "wns": .wns, "browser": .webpush]

    /// Members Azure's service writes and a client may send back after a GET: accepted and not
    /// stored (Herald answers its own values for them).
    static let serviceMembers: Set<String> = ["lastUpdate", "pushChannelExpired"]

    /// Turns an Azure installation body into Herald's document, or says what Herald does not
    /// take (an unknown platform, `pushVariables`).
    static func heraldDocument(from bytes: [UInt8]) throws -> [UInt8] {
        guard case .object(let members) = try RequestReading.json(bytes, what: "the installation") else {
            throw APIError.invalidBody(field: "", "an installation is a JSON object")
        }
        var converted: [JSONMember] = []
        for member in members {
            switch member.key {
            case "platform":
                guard case .string(let name) = member.value else {
                    throw APIError.invalidBody(field: "platform", "platform is a string: apns, fcmv1, gcm, wns or browser")
                }
                guard let platform = platforms[name.lowercased()] else {
                    throw APIError.invalidBody(
                        field: "platform",
                        "platform \"\(name)\" is not one Herald sends to through Azure's installations; use apns, fcmv1, gcm, wns or browser"
                    )
                }
                converted.append(JSONMember(key: "platform", value: .string(platform.rawValue)))
            case "expirationTime":
                converted.append(JSONMember(key: "expiresAt", value: member.value))
            case "pushVariables":
                throw APIError.invalidBody(field: "pushVariables", "pushVariables are not supported by Herald; leave them out")
            case _ where serviceMembers.contains(member.key):
                continue
            default:
                converted.append(member)
            }
        }
        var document: [UInt8] = []
        JSONValue.object(converted).write(into: &document)
        return document
    }

    /// The installation as Azure's GET answers it.
    static func azureJSON(_ stored: StoredInstallation) -> JSONValue {
        let installation = stored.installation
        guard case .object(let members) = installation.documentJSON() else { return .null }
        var converted: [JSONMember] = []
        for member in members where member.key != "hub" && member.key != "expiresAt" {
            if member.key == "platform" {
                converted.append(JSONMember(key: "platform", value: .string(azureName(installation.platform))))
            } else if member.key == "pushChannel", installation.platform == .webpush,
                case .success(let subscription) = WebPushSubscription.parse(handle: installation.pushChannel)
            {
                let channel: [JSONMember] = [
                    JSONMember(key: "endpoint", value: .string(subscription.endpoint)),
                    JSONMember(key: "p256dh", value: .string(Base64URL.encode(subscription.p256dh))),
                    JSONMember(key: "auth", value: .string(Base64URL.encode(subscription.auth))),
                ]
                converted.append(JSONMember(key: "pushChannel", value: .object(channel)))
            } else if member.key == "userId" && member.value == .null {
                continue
            } else {
                converted.append(member)
            }
        }
        let expiry =
            installation.expiresAt.map { ISO8601Timestamp.format($0, precision: .secondsWhenExact) } ?? "9999-12-31T23:59:59.9999999Z"
        converted.append(JSONMember(key: "expirationTime", value: .string(expiry)))
        converted.append(JSONMember(key: "pushChannelExpired", value: .bool(false)))
        return .object(converted)
    }

    static func azureName(_ platform: Platform) -> String {
        switch platform {
        case .apns: "apns"
        case .fcm: "fcmv1"
        case .wns: "wns"
        case .webpush: "browser"
        }
    }

    /// Azure's JSON Patch on installations in Herald's terms. Herald's installation patch keeps
    /// Azure's tag rules already (a string added to `/tags` is appended, `/tags/<tag>` removes
    /// that tag); only `/expirationTime` is Herald's `/expiresAt`.
    static func heraldPatch(_ bytes: [UInt8]) throws -> JSONValue {
        guard case .array(let operations) = try RequestReading.json(bytes, what: "the JSON Patch") else {
            throw APIError.invalidBody(field: "", "a JSON Patch is an array of operations")
        }
        return .array(
            operations.map { operation in
                guard case .object(let members) = operation, operation["path"] == .string("/expirationTime") else { return operation }
                return .object(members.map { $0.key == "path" ? JSONMember(key: "path", value: .string("/expiresAt")) : $0 })
            })
    }
}

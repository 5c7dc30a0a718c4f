import Foundation
import HeraldPush

/// The sender role's credentials and connection settings (`HERALD_APNS_*`, `HERALD_FCM_*`,
/// `HERALD_PUSH_*`). Every problem stops the worker at start-up with one line naming the
/// setting or file and the field; no key material is ever printed.
extension HeraldSettings {
    public func pushConnectionOptions() throws -> PushConnectionOptions {
        let caFile = self[.pushCaFile]
        if !caFile.isEmpty, !FileManager.default.isReadableFile(atPath: caFile) {
            throw SettingError(key: .pushCaFile, value: caFile, expected: "a readable PEM file of certificate authorities")
        }
        return PushConnectionOptions(
            connections: try int(.pushConnections, in: 1...64, expected: "connections from 1 to 64"),
            streamsPerConnection: try int(.pushStreams, in: 1...1_000, expected: "streams from 1 to 1000"),
            requestTimeout: TimeInterval(try int(.pushTimeoutSeconds, in: 1...120, expected: "seconds from 1 to 120")),
            extraTrustFile: caFile.isEmpty ? nil : caFile)
    }

    /// The APNs teams: the one of `HERALD_APNS_KEY_FILE` and those of `HERALD_APNS_TEAMS_FILE`.
    public func apnsCredentials() throws -> [APNsCredentials] {
        var teams: [APNsCredentials] = []
        let keyFile = self[.apnsKeyFile]
        if !keyFile.isEmpty {
            for key in [Setting.Key.apnsKeyId, .apnsTeamId, .apnsTopics] where self[key].isEmpty {
                throw SettingError(key: key, value: "", expected: "a value: \(Setting(.apnsKeyFile).environment) is set")
            }
            teams.append(
                try APNsCredentials.load(
                    keyFile: keyFile, keyId: self[.apnsKeyId], teamId: self[.apnsTeamId], topics: list(.apnsTopics),
                    endpoint: self[.apnsEndpoint]))
        }
        let teamsFile = self[.apnsTeamsFile]
        if !teamsFile.isEmpty { teams += try Self.apnsTeams(file: teamsFile) }
        return teams
    }

    static func apnsTeams(file: String) throws -> [APNsCredentials] {
        guard let data = FileManager.default.contents(atPath: file) else {
            throw PushConfigurationError(source: file, problem: "cannot read the APNs teams file")
        }
        guard let entries = (try? JSONSerialization.jsonObject(with: data)) as? [[String: Any]] else {
            throw PushConfigurationError(source: file, problem: "not a JSON array of teams")
        }
        return try entries.enumerated().map { index, entry in
            func field(_ name: String) throws -> String {
                guard let value = entry[name] as? String, !value.isEmpty else {
                    throw PushConfigurationError(source: file, field: "[\(index)].\(name)", problem: "missing or not a string")
                }
                return value
            }
            guard let topics = entry["topics"] as? [String], !topics.isEmpty else {
                throw PushConfigurationError(source: file, field: "[\(index)].topics", problem: "missing or not an array of bundle ids")
            }
            var keyFile = try field("keyFile")
            if !keyFile.hasPrefix("/") {
                keyFile = URL(fileURLWithPath: file).deletingLastPathComponent().appendingPathComponent(keyFile).path
            }
            return try APNsCredentials.load(
                keyFile: keyFile, keyId: try field("keyId"), teamId: try field("teamId"), topics: topics,
                endpoint: (entry["endpoint"] as? String) ?? "production")
        }
    }

    /// The FCM projects of `HERALD_FCM_SERVICE_ACCOUNTS`.
    public func fcmServiceAccounts() throws -> [FCMServiceAccount] {
        try list(.fcmServiceAccounts).map { try FCMServiceAccount.load(file: $0) }
    }

    public func fcmEndpoint() throws -> URL {
        let text = self[.fcmEndpoint]
        guard let url = URL(string: text), url.scheme == "https", url.host != nil else {
            throw SettingError(key: .fcmEndpoint, value: text, expected: "an https:// URL")
        }
        return url
    }

    /// The VAPID identity of `HERALD_WEBPUSH_VAPID_KEY` and `HERALD_WEBPUSH_VAPID_SUBJECT`, or nil
    /// when no key is set.
    public func vapidCredentials() throws -> VAPIDCredentials? {
        let key = self[.webpushVapidKey]
        guard !key.isEmpty else { return nil }
        guard !self[.webpushVapidSubject].isEmpty else {
            throw SettingError(
                key: .webpushVapidSubject, value: "",
                expected: "mailto:<address> or an https:// URL: \(Setting(.webpushVapidKey).environment) is set")
        }
        return try VAPIDCredentials.make(
            privateKey: key, subject: self[.webpushVapidSubject], source: Setting(.webpushVapidKey).environment)
    }

    /// The Windows package of `HERALD_WNS_PACKAGE_SID` and `HERALD_WNS_CLIENT_SECRET`, or nil when no
    /// package SID is set.
    public func wnsCredentials() throws -> WNSCredentials? {
        let sid = self[.wnsPackageSid]
        guard !sid.isEmpty else { return nil }
        guard !self[.wnsClientSecret].isEmpty else {
            throw SettingError(
                key: .wnsClientSecret, value: "", expected: "the client secret: \(Setting(.wnsPackageSid).environment) is set")
        }
        func url(_ key: Setting.Key) throws -> URL? {
            let text = self[key]
            guard !text.isEmpty else { return nil }
            guard let url = URL(string: text), url.scheme == "https", url.host != nil else {
                throw SettingError(key: key, value: text, expected: "an https:// URL")
            }
            return url
        }
        return WNSCredentials(
            packageSid: sid, clientSecret: self[.wnsClientSecret], tokenURL: try url(.wnsTokenUrl) ?? WNSCredentials.production,
            endpoint: try url(.wnsEndpoint))
    }

    /// The sender's clients; at least one APNs team, FCM project, VAPID key or WNS package is required.
    public func pushGateway() async throws -> PushGateway {
        let apns = try apnsCredentials()
        let fcm = try fcmServiceAccounts()
        let vapid = try vapidCredentials()
        let wns = try wnsCredentials()
        guard !apns.isEmpty || !fcm.isEmpty || vapid != nil || wns != nil else {
            throw SettingError(
                key: .apnsKeyFile, value: "",
                expected:
                    "credentials for the sender role: \(Setting(.apnsKeyFile).environment) (APNs), \(Setting(.fcmServiceAccounts).environment) (FCM), \(Setting(.webpushVapidKey).environment) (Web Push) or \(Setting(.wnsPackageSid).environment) (WNS)"
            )
        }
        return try await PushGateway.make(
            apns: apns, fcm: fcm, fcmEndpoint: try fcmEndpoint(), vapid: vapid, wns: wns, options: try pushConnectionOptions())
    }
}

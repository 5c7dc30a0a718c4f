import Foundation

/// A hub's own push credentials: the identity each push service knows the hub's app by. A
/// hub's deliveries for a platform go with the hub's credentials for it; a hub without them
/// uses the deployment's (`HERALD_APNS_*`, `HERALD_FCM_*`, …), which is how the default hub
/// always sends.
///
/// The secrets (APNs key, service account key, VAPID key, WNS secret) are kept in the hub's
/// record on `herald.hubs`, like its policies' keys; a read of the hub answers every member
/// but them (``redactedJSON``). Here they are only checked for shape; the sender's push
/// library checks the keys themselves when a hub is written.
public struct HubCredentials: Sendable, Hashable {
    /// An APNs provider: an Apple team's `.p8` signing key and the apps (bundle ids) it sends for.
    public struct APNs: Sendable, Hashable {
        public var keyId: String
        public var teamId: String
        /// The apps' bundle ids, the requests' `apns-topic`; a delivery naming none goes to the first.
        public var topics: [String]
        /// The `.p8` key, a PKCS#8 PEM block.
        public var key: String
        /// `production`, `sandbox`, or an https:// base URL.
        public var endpoint: String

        public init(keyId: String, teamId: String, topics: [String], key: String, endpoint: String = "production") {
            self.keyId = keyId
            self.teamId = teamId
            self.topics = topics
            self.key = key
            self.endpoint = endpoint
        }
    }

    /// A Google service account allowed to send for one Firebase project (the members of the
    /// JSON key file Google issues that sending needs).
    public struct FCM: Sendable, Hashable {
        public var projectId: String
        public var clientEmail: String
        public var privateKey: String
        public var privateKeyId: String?
        public var tokenURI: String?

        public init(projectId: String, clientEmail: String, privateKey: String, privateKeyId: String? = nil, tokenURI: String? = nil) {
            self.projectId = projectId
            self.clientEmail = clientEmail
            self.privateKey = privateKey
            self.privateKeyId = privateKeyId
            self.tokenURI = tokenURI
        }

        /// The key file as Google writes it (`type`, `project_id`, `client_email`, …).
        public var serviceAccountJSON: JSONValue {
            var members = [
                JSONMember(key: "type", value: .string("service_account")),
                JSONMember(key: "project_id", value: .string(projectId)),
                JSONMember(key: "client_email", value: .string(clientEmail)),
                JSONMember(key: "private_key", value: .string(privateKey)),
            ]
            if let privateKeyId { members.append(JSONMember(key: "private_key_id", value: .string(privateKeyId))) }
            if let tokenURI { members.append(JSONMember(key: "token_uri", value: .string(tokenURI))) }
            return .object(members)
        }
    }

    /// The application server's VAPID identity (RFC 8292) browsers subscribed the hub's web app with.
    public struct WebPush: Sendable, Hashable {
        /// The P-256 private key: 32 bytes base64url, or a PEM block.
        public var privateKey: String
        /// `mailto:` an address, or an https:// URL.
        public var subject: String

        public init(privateKey: String, subject: String) {
            self.privateKey = privateKey
            self.subject = subject
        }
    }

    /// A Windows app's package identity in the Partner Center.
    public struct WNS: Sendable, Hashable {
        public var packageSid: String
        public var clientSecret: String
        /// The token endpoint when not Microsoft's (a local server).
        public var tokenURL: String?
        /// Every channel URI goes to this origin instead of its own when set (a local server).
        public var endpoint: String?

        public init(packageSid: String, clientSecret: String, tokenURL: String? = nil, endpoint: String? = nil) {
            self.packageSid = packageSid
            self.clientSecret = clientSecret
            self.tokenURL = tokenURL
            self.endpoint = endpoint
        }
    }

    public var apns: APNs?
    public var fcm: FCM?
    public var webPush: WebPush?
    public var wns: WNS?

    public init(apns: APNs? = nil, fcm: FCM? = nil, webPush: WebPush? = nil, wns: WNS? = nil) {
        self.apns = apns
        self.fcm = fcm
        self.webPush = webPush
        self.wns = wns
    }

    public var isEmpty: Bool { apns == nil && fcm == nil && webPush == nil && wns == nil }

    /// Whether the hub has its own credentials for `platform`.
    public func covers(_ platform: Platform) -> Bool {
        switch platform {
        case .apns: apns != nil
        case .fcm: fcm != nil
        case .webpush: webPush != nil
        case .wns: wns != nil
        }
    }

    /// The members of a `credentials` object, one per push service.
    static let memberNames = ["apns", "fcm", "webPush", "wns"]
    /// The longest string any member may be (a service account's RSA key is about 1.7 KB).
    static let maxStringBytes = 16_384
}

// MARK: JSON

extension HubCredentials {
    /// The stored form (`includingSecrets`) or the one reads answer: every member but the keys
    /// and secrets.
    func jsonValue(includingSecrets: Bool) -> JSONValue {
        var members: [JSONMember] = []
        if let apns {
            var fields = [
                JSONMember(key: "keyId", value: .string(apns.keyId)),
                JSONMember(key: "teamId", value: .string(apns.teamId)),
                JSONMember(key: "topics", value: .array(apns.topics.map(JSONValue.string))),
                JSONMember(key: "endpoint", value: .string(apns.endpoint)),
            ]
            if includingSecrets { fields.append(JSONMember(key: "key", value: .string(apns.key))) }
            members.append(JSONMember(key: "apns", value: .object(fields)))
        }
        if let fcm {
            let account: JSONValue =
                includingSecrets
                ? fcm.serviceAccountJSON
                : .object([
                    JSONMember(key: "project_id", value: .string(fcm.projectId)),
                    JSONMember(key: "client_email", value: .string(fcm.clientEmail)),
                ])
            members.append(JSONMember(key: "fcm", value: .object([JSONMember(key: "serviceAccount", value: account)])))
        }
        if let webPush {
            var fields = [JSONMember(key: "subject", value: .string(webPush.subject))]
            if includingSecrets { fields.append(JSONMember(key: "privateKey", value: .string(webPush.privateKey))) }
            members.append(JSONMember(key: "webPush", value: .object(fields)))
        }
        if let wns {
            var fields = [JSONMember(key: "packageSid", value: .string(wns.packageSid))]
            if let tokenURL = wns.tokenURL { fields.append(JSONMember(key: "tokenUrl", value: .string(tokenURL))) }
            if let endpoint = wns.endpoint { fields.append(JSONMember(key: "endpoint", value: .string(endpoint))) }
            if includingSecrets { fields.append(JSONMember(key: "clientSecret", value: .string(wns.clientSecret))) }
            members.append(JSONMember(key: "wns", value: .object(fields)))
        }
        return .object(members)
    }

    /// Reads a `credentials` member over `current`: a member that is present replaces that
    /// service's credentials, `null` removes them, an absent one keeps them.
    static func read(_ reader: JSONFieldReader, over current: HubCredentials, issues: inout [ValidationIssue]) -> HubCredentials {
        guard let member = reader.value["credentials"], member != .null else { return current }
        guard case .object(let services) = member else {
            issues.append(JSONFieldReader.wrongType(reader.fieldPath("credentials"), expected: "an object", found: member))
            return current
        }
        let object = JSONFieldReader(member, path: reader.fieldPath("credentials"))
        object.refuseUnknownMembers(known: Set(memberNames), issues: &issues)
        var read = current
        for service in services {
            let removes = service.value == .null
            switch service.key {
            case "apns": read.apns = removes ? nil : readAPNs(object, issues: &issues)
            case "fcm": read.fcm = removes ? nil : readFCM(object, issues: &issues)
            case "webPush": read.webPush = removes ? nil : readWebPush(object, issues: &issues)
            case "wns": read.wns = removes ? nil : readWNS(object, issues: &issues)
            default: continue
            }
        }
        return read
    }

    private static func readAPNs(_ parent: JSONFieldReader, issues: inout [ValidationIssue]) -> APNs? {
        guard let apns = parent.object("apns", required: true, issues: &issues) else { return nil }
        apns.refuseUnknownMembers(known: ["keyId", "teamId", "topics", "key", "endpoint"], issues: &issues)
        let before = issues.count
        let keyId = text(apns, "keyId", issues: &issues)
        let teamId = text(apns, "teamId", issues: &issues)
        for (name, value) in [("keyId", keyId), ("teamId", teamId)] {
            if let value, value.utf8.count != 10 || !value.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) {
                issues.append(
                    ValidationIssue(
                        field: apns.fieldPath(name), code: ValidationIssue.Code.invalidValue,
                        message: "\"\(value)\" is not a 10-character Apple \(name == "keyId" ? "key id" : "team id")"))
            }
        }
        let topics = apns.stringArray("topics", required: true, issues: &issues)
        if let topics, topics.isEmpty || topics.contains(where: { $0.isEmpty || $0.utf8.count > 255 }) {
            issues.append(
                ValidationIssue(
                    field: apns.fieldPath("topics"), code: ValidationIssue.Code.invalidValue,
                    message: "the apps' bundle ids (apns-topic): at least one, none empty or over 255 bytes"))
        }
        let key = pem(apns, "key", what: "the .p8 key", issues: &issues)
        let endpoint = endpoint(apns, "endpoint", named: ["production", "sandbox", "development"], issues: &issues) ?? "production"
        guard issues.count == before, let keyId, let teamId, let topics, let key else { return nil }
        return APNs(keyId: keyId, teamId: teamId, topics: topics, key: key, endpoint: endpoint)
    }

    private static func readFCM(_ parent: JSONFieldReader, issues: inout [ValidationIssue]) -> FCM? {
        guard let fcm = parent.object("fcm", required: true, issues: &issues) else { return nil }
        fcm.refuseUnknownMembers(known: ["serviceAccount"], issues: &issues)
        guard let account = fcm.object("serviceAccount", required: true, issues: &issues) else { return nil }
        // Google's key file has more members (auth_uri, client_id, …); only these are used.
        let before = issues.count
        if let type = account.string("type", required: false, issues: &issues), type != "service_account" {
            issues.append(
                ValidationIssue(
                    field: account.fieldPath("type"), code: ValidationIssue.Code.invalidValue,
                    message: "is \"\(type)\"; a service account key file says \"service_account\""))
        }
        let projectId = text(account, "project_id", issues: &issues)
        let clientEmail = text(account, "client_email", issues: &issues)
        let privateKey = pem(account, "private_key", what: "the service account's private key", issues: &issues)
        let privateKeyId = account.string("private_key_id", required: false, issues: &issues)
        let tokenURI = endpoint(account, "token_uri", named: [], issues: &issues)
        guard issues.count == before, let projectId, let clientEmail, let privateKey else { return nil }
        return FCM(projectId: projectId, clientEmail: clientEmail, privateKey: privateKey, privateKeyId: privateKeyId, tokenURI: tokenURI)
    }

    private static func readWebPush(_ parent: JSONFieldReader, issues: inout [ValidationIssue]) -> WebPush? {
        guard let webPush = parent.object("webPush", required: true, issues: &issues) else { return nil }
        webPush.refuseUnknownMembers(known: ["privateKey", "subject"], issues: &issues)
        let before = issues.count
        let privateKey = text(webPush, "privateKey", issues: &issues)
        let subject = text(webPush, "subject", issues: &issues)
        guard issues.count == before, let privateKey, let subject else { return nil }
        return WebPush(privateKey: privateKey, subject: subject)
    }

    private static func readWNS(_ parent: JSONFieldReader, issues: inout [ValidationIssue]) -> WNS? {
        guard let wns = parent.object("wns", required: true, issues: &issues) else { return nil }
        wns.refuseUnknownMembers(known: ["packageSid", "clientSecret", "tokenUrl", "endpoint"], issues: &issues)
        let before = issues.count
        let packageSid = text(wns, "packageSid", issues: &issues)
        let clientSecret = text(wns, "clientSecret", issues: &issues)
        let tokenURL = endpoint(wns, "tokenUrl", named: [], issues: &issues)
        let endpoint = endpoint(wns, "endpoint", named: [], issues: &issues)
        guard issues.count == before, let packageSid, let clientSecret else { return nil }
        return WNS(packageSid: packageSid, clientSecret: clientSecret, tokenURL: tokenURL, endpoint: endpoint)
    }

    /// A required, non-empty string of at most `maxStringBytes` without control characters.
    private static func text(_ reader: JSONFieldReader, _ name: String, issues: inout [ValidationIssue]) -> String? {
        guard let value = reader.string(name, required: true, issues: &issues) else { return nil }
        let problem: String? =
            if value.isEmpty { "is empty" } else if value.utf8.count > maxStringBytes {
                "is \(value.utf8.count) bytes; the limit is \(maxStringBytes)"
            } else if value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
                "contains control characters"
            } else { nil }
        if let problem {
            issues.append(ValidationIssue(field: reader.fieldPath(name), code: ValidationIssue.Code.invalidValue, message: problem))
            return nil
        }
        return value
    }

    /// A PEM `PRIVATE KEY` block (line breaks allowed), at most `maxStringBytes`.
    private static func pem(_ reader: JSONFieldReader, _ name: String, what: String, issues: inout [ValidationIssue]) -> String? {
        guard let value = reader.string(name, required: true, issues: &issues) else { return nil }
        guard value.utf8.count <= maxStringBytes, value.contains("-----BEGIN PRIVATE KEY-----"),
            value.contains("-----END PRIVATE KEY-----")
        else {
            issues.append(
                ValidationIssue(
                    field: reader.fieldPath(name), code: ValidationIssue.Code.invalidValue,
                    message: "\(what) must be a PEM block from \"-----BEGIN PRIVATE KEY-----\" to \"-----END PRIVATE KEY-----\""))
            return nil
        }
        return value
    }

    /// An optional endpoint: one of `named`, or an https:// URL with a host.
    private static func endpoint(_ reader: JSONFieldReader, _ name: String, named: [String], issues: inout [ValidationIssue]) -> String? {
        guard let value = reader.string(name, required: false, issues: &issues) else { return nil }
        if named.contains(value.lowercased()) { return value.lowercased() }
        guard let url = URL(string: value), url.scheme == "https", url.host?.isEmpty == false, value.utf8.count <= 2_048 else {
            let choices = named.map { "\($0), " }.joined()
            issues.append(
                ValidationIssue(
                    field: reader.fieldPath(name), code: ValidationIssue.Code.invalidValue,
                    message: "\"\(value)\" is not \(choices)an https:// URL"))
            return nil
        }
        return value
    }
}

import Foundation

/// What a shared-access policy lets its token holders do, named after Azure Notification
/// Hubs' claims. Rights do not imply each other except that `manage` allows everything.
public enum AccessRight: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    /// Create, read, update and delete single registrations and installations (devices).
    case listen
    /// Publish notifications and read their status (newsroom systems).
    case send
    /// Everything, including listing registrations by tag (operators and app backends).
    case manage

    public var description: String { rawValue }
}

/// A hub as the deployment keeps it: the value of the compacted `herald.hubs` topic (key: the
/// hub's name), created and changed through `/v1/hubs` and `herald hubs`.
///
/// It holds the hub's own shared-access policies (two keys each, like Azure's primary and
/// secondary, so a key is rotated without downtime) and its limits. The keys are secrets: the
/// API never answers them to a read (``redactedJSON``), only to the keys action a namespace
/// Manage policy calls. So are its push credentials' keys, which no read answers.
public struct HubDefinition: Sendable, Hashable {
    public var name: HubName
    public var policies: [HubPolicy]
    public var limits: HubLimits
    /// The hub's own push credentials; a platform without them uses the deployment's.
    public var credentials: HubCredentials
    /// How often one device may be alerted (`FrequencyCap`); empty: no cap.
    public var frequencyCaps: [FrequencyCap]
    /// Whether breaking alerts respect devices' quiet hours too (held or dropped like any
    /// other); false (the default): breaking news goes through them.
    public var quietHoursHoldBreaking: Bool = false
    /// Grows with every change of the hub.
    public var version: Int64

    public init(
        name: HubName, policies: [HubPolicy], limits: HubLimits = HubLimits(), credentials: HubCredentials = HubCredentials(),
        frequencyCaps: [FrequencyCap] = [], version: Int64 = 1
    ) {
        self.frequencyCaps = frequencyCaps
        self.name = name
        self.policies = policies
        self.limits = limits
        self.credentials = credentials
        self.version = version
    }

    public func policy(named name: String) -> HubPolicy? { policies.first { $0.name == name } }

    /// Azure's connection string for a key of this deployment:
    /// `Endpoint=sb://<host[:port]>/;SharedAccessKeyName=<policy>;SharedAccessKey=<key>`, the
    /// host being that of the deployment's hub URI (`hubResource`, `HERALD_HUB_URI`).
    public static func connectionString(hubResource: String, policy: String, key: String) -> String {
        var authority = Substring(hubResource)
        if let schemeEnd = authority.range(of: "://") { authority = authority[schemeEnd.upperBound...] }
        authority = authority.prefix { $0 != "/" }
        return "Endpoint=sb://\(authority)/;SharedAccessKeyName=\(policy);SharedAccessKey=\(key)"
    }

    /// Azure's two default policies of a new hub, with fresh keys.
    public static func defaultPolicies(keys: () -> String = HubPolicy.newKey) -> [HubPolicy] {
        [
            HubPolicy(name: "DefaultListenSharedAccessSignature", rights: [.listen], primaryKey: keys(), secondaryKey: keys()),
            HubPolicy(
                name: "DefaultFullSharedAccessSignature", rights: [.listen, .send, .manage], primaryKey: keys(), secondaryKey: keys()),
        ]
    }
}

/// One shared-access policy of a hub: tokens signed with either key carry its rights.
public struct HubPolicy: Sendable, Hashable {
    public var name: String
    public var rights: Set<AccessRight>
    public var primaryKey: String
    public var secondaryKey: String

    public init(name: String, rights: Set<AccessRight>, primaryKey: String, secondaryKey: String) {
        self.name = name
        self.rights = rights
        self.primaryKey = primaryKey
        self.secondaryKey = secondaryKey
    }

    /// A new key as Azure makes them: 32 random bytes in base64 (44 characters).
    public static func newKey() -> String {
        var generator = SystemRandomNumberGenerator()
        return Data((0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }).base64EncodedString()
    }

    /// Policy names: letters, digits and `- _ .`, 1 to 256 characters (Azure's rule for
    /// authorization rule names).
    static func nameProblem(_ name: String) -> String? {
        IdentifierRules.problem(name, what: "a policy name", maxLength: 256, extra: "-_.")
    }
}

/// What one hub may use of the deployment. Nil: no limit.
public struct HubLimits: Sendable, Hashable {
    /// Notifications the API accepts for the hub per minute; the excess is refused with 403
    /// (Azure's answer for a quota), other hubs untouched.
    public var sendsPerMinute: Int?
    /// Live registrations of the hub (an installation counts one per template); a write that
    /// would create more is refused with 403 `quota_exceeded`. Azure's tiers: 500 (Free),
    /// 200,000 (Basic), 10 million (Standard).
    public var maxRegistrations: Int?
    /// Registrations of one push handle (a device): past it, 403 `quota_exceeded`.
    public var maxRegistrationsPerHandle: Int?
    /// Tags of one registration or installation, below the deployment's own limit (Azure's is
    /// 60): past it, 400 `too_many_tags`.
    public var maxTagsPerRegistration: Int?
    /// Distinct templates the hub's registrations may bring (every worker compiles and keeps
    /// each one): a write with a template the hub has not had, once it has had this many, is
    /// refused with 403 `quota_exceeded`. Counted from when the limit is set, and never
    /// forgotten: deleting the registrations does not give a template's place back. Azure has
    /// no such limit.
    public var maxTemplates: Int?
    /// The largest payload (bytes) the hub's devices get, below each platform's own (4 KiB for
    /// APNs and FCM, 5 KiB for WNS, 3,993 bytes for Web Push): a native payload over it is
    /// refused at publish (400 naming it), a rendition over it is skipped `payload_too_large`.
    public var maxPayloadBytes: Int?

    public init(
        sendsPerMinute: Int? = nil, maxRegistrations: Int? = nil, maxRegistrationsPerHandle: Int? = nil,
        maxTagsPerRegistration: Int? = nil, maxTemplates: Int? = nil, maxPayloadBytes: Int? = nil
    ) {
        self.sendsPerMinute = sendsPerMinute
        self.maxRegistrations = maxRegistrations
        self.maxRegistrationsPerHandle = maxRegistrationsPerHandle
        self.maxTagsPerRegistration = maxTagsPerRegistration
        self.maxTemplates = maxTemplates
        self.maxPayloadBytes = maxPayloadBytes
    }

    /// `name=value` for each limit that is set, in the order of the hub document.
    public var summary: String {
        Self.members.compactMap { member in self[keyPath: member.path].map { "\(member.name)=\($0)" } }.joined(separator: "  ")
    }

    /// Whether writes of the hub's registrations are checked against a count.
    public var countsRegistrations: Bool { maxRegistrations != nil || maxRegistrationsPerHandle != nil }

    /// The members of `limits`, with their ranges: one table for reading, writing and docs.
    static var members: [(name: String, range: ClosedRange<Int64>, path: WritableKeyPath<HubLimits, Int?>)] {
        [
            ("sendsPerMinute", 1...100_000_000, \.sendsPerMinute),
            ("maxRegistrations", 1...10_000_000_000, \.maxRegistrations),
            ("maxRegistrationsPerHandle", 1...100_000, \.maxRegistrationsPerHandle),
            ("maxTagsPerRegistration", 1...1_000_000, \.maxTagsPerRegistration),
            ("maxTemplates", 1...1_000_000, \.maxTemplates),
            ("maxPayloadBytes", 64...Int64(PayloadLimits.default.largest), \.maxPayloadBytes),
        ]
    }
}

// MARK: JSON

extension HubDefinition {
    /// The stored form (the `herald.hubs` value), keys included.
    public func jsonBytes() -> [UInt8] {
        var bytes: [UInt8] = []
        jsonValue(includingKeys: true).write(into: &bytes)
        return bytes
    }

    /// The form every read answers: policies with their names and rights, never their keys.
    public var redactedJSON: JSONValue { jsonValue(includingKeys: false) }

    func jsonValue(includingKeys: Bool) -> JSONValue {
        var limitMembers: [JSONMember] = []
        for member in HubLimits.members {
            if let value = limits[keyPath: member.path] {
                limitMembers.append(JSONMember(key: member.name, value: .number(String(value))))
            }
        }
        return .object([
            JSONMember(key: "name", value: .string(name.rawValue)),
            JSONMember(
                key: "policies",
                value: .array(
                    policies.map { policy in
                        var members = [
                            JSONMember(key: "name", value: .string(policy.name)),
                            JSONMember(key: "rights", value: .array(policy.rights.map(\.rawValue).sorted().map(JSONValue.string))),
                        ]
                        if includingKeys {
                            members.append(JSONMember(key: "primaryKey", value: .string(policy.primaryKey)))
                            members.append(JSONMember(key: "secondaryKey", value: .string(policy.secondaryKey)))
                        }
                        return .object(members)
                    })),
            JSONMember(key: "limits", value: .object(limitMembers)),
            JSONMember(key: "credentials", value: credentials.jsonValue(includingSecrets: includingKeys)),
            JSONMember(key: "frequencyCaps", value: .array(frequencyCaps.map(\.jsonValue))),
            JSONMember(key: "quietHoursHoldBreaking", value: .bool(quietHoursHoldBreaking)),
            JSONMember(key: "version", value: .number(String(version))),
        ])
    }

    /// Reads a stored hub (a `herald.hubs` value).
    public static func decodeStored(_ bytes: some Collection<UInt8>) throws(ValidationFailure) -> HubDefinition {
        let root: JSONValue
        switch JSONFieldReader.parseObject(bytes, maximumBytes: .max, what: "the hub") {
        case .success(let value): root = value
        case .failure(let failure): throw failure
        }
        var issues: [ValidationIssue] = []
        let reader = JSONFieldReader(root)
        let name = reader.string("name", required: true, issues: &issues).flatMap(HubName.init)
        let policies = readPolicies(reader, requireKeys: true, issues: &issues) ?? []
        let limits = readLimits(reader, issues: &issues)
        let credentials = HubCredentials.read(reader, over: HubCredentials(), issues: &issues)
        let frequencyCaps = FrequencyCap.read(reader, issues: &issues) ?? []
        let holdBreaking = readHoldBreaking(reader, issues: &issues) ?? false
        let version = reader.integer("version", required: true, issues: &issues)
        guard issues.isEmpty, let name, let version else {
            if name == nil && issues.isEmpty {
                issues.append(ValidationIssue(field: "name", code: ValidationIssue.Code.invalidIdentifier, message: "not a hub name"))
            }
            throw ValidationFailure(issues: issues)
        }
        var hub = HubDefinition(
            name: name, policies: policies, limits: limits, credentials: credentials, frequencyCaps: frequencyCaps, version: version)
        hub.quietHoursHoldBreaking = holdBreaking
        return hub
    }

    /// Reads a `PUT /v1/hubs/{hub}` body: `policies` (names and rights; the keys are made by
    /// Herald, so a body may not carry any), `limits`, `credentials` and `frequencyCaps`, all
    /// optional, and `quietHoursHoldBreaking`. Absent `policies` keep the hub's current ones, or
    /// give a new hub Azure's two defaults; absent `frequencyCaps` keep the current rules (`[]`
    /// removes them), an absent `quietHoursHoldBreaking` its current value; in
    /// `credentials`, an absent service keeps its credentials and `null` removes them.
    public static func decodeRequest(_ bytes: some Collection<UInt8>, name: HubName, current: HubDefinition?)
        throws(ValidationFailure) -> HubDefinition
    {
        let root: JSONValue
        switch JSONFieldReader.parseObject(bytes.isEmpty ? Array("{}".utf8) : Array(bytes), maximumBytes: 65_536, what: "the hub") {
        case .success(let value): root = value
        case .failure(let failure): throw failure
        }
        var issues: [ValidationIssue] = []
        let reader = JSONFieldReader(root)
        reader.refuseUnknownMembers(
            known: ["name", "policies", "limits", "credentials", "frequencyCaps", "quietHoursHoldBreaking", "version"], issues: &issues)
        if let named = reader.string("name", required: false, issues: &issues), HubName(named) != name {
            issues.append(
                ValidationIssue(
                    field: "name", code: ValidationIssue.Code.invalidValue,
                    message: "the body names hub \"\(named)\" but the request is for hub \"\(name)\""))
        }
        let requested = readPolicies(reader, requireKeys: false, issues: &issues)
        let limits = readLimits(reader, issues: &issues)
        let credentials = HubCredentials.read(reader, over: current?.credentials ?? HubCredentials(), issues: &issues)
        let frequencyCaps = FrequencyCap.read(reader, issues: &issues) ?? current?.frequencyCaps ?? []
        let holdBreaking = readHoldBreaking(reader, issues: &issues) ?? current?.quietHoursHoldBreaking ?? false
        if !issues.isEmpty { throw ValidationFailure(issues: issues) }
        var policies = current?.policies ?? defaultPolicies()
        if let requested {
            // A policy that stays keeps its keys; a new one gets fresh ones.
            policies = requested.map { wanted in
                guard let kept = current?.policy(named: wanted.name) else {
                    return HubPolicy(
                        name: wanted.name, rights: wanted.rights, primaryKey: HubPolicy.newKey(), secondaryKey: HubPolicy.newKey())
                }
                return HubPolicy(name: wanted.name, rights: wanted.rights, primaryKey: kept.primaryKey, secondaryKey: kept.secondaryKey)
            }
        }
        var hub = HubDefinition(
            name: name, policies: policies, limits: limits, credentials: credentials, frequencyCaps: frequencyCaps,
            version: (current?.version ?? 0) + 1)
        hub.quietHoursHoldBreaking = holdBreaking
        return hub
    }

    static func readPolicies(_ reader: JSONFieldReader, requireKeys: Bool, issues: inout [ValidationIssue]) -> [HubPolicy]? {
        guard let member = reader.member("policies") else {
            if requireKeys { issues.append(JSONFieldReader.missing("policies", expected: "an array of policies")) }
            return nil
        }
        guard case .array(let elements) = member else {
            issues.append(JSONFieldReader.wrongType("policies", expected: "an array of policies", found: member))
            return nil
        }
        var policies: [HubPolicy] = []
        var names: Set<String> = []
        for (position, element) in elements.enumerated() {
            let field = "policies[\(position)]"
            guard case .object = element else {
                issues.append(JSONFieldReader.wrongType(field, expected: "an object", found: element))
                continue
            }
            let policy = JSONFieldReader(element, path: field)
            policy.refuseUnknownMembers(
                known: requireKeys ? ["name", "rights", "primaryKey", "secondaryKey"] : ["name", "rights"], issues: &issues)
            let name = policy.string("name", required: true, issues: &issues)
            if let name, let problem = HubPolicy.nameProblem(name) {
                issues.append(ValidationIssue(field: "\(field).name", code: ValidationIssue.Code.invalidIdentifier, message: problem))
            } else if let name, !names.insert(name).inserted {
                issues.append(
                    ValidationIssue(
                        field: "\(field).name", code: ValidationIssue.Code.invalidValue, message: "a second policy named \"\(name)\""))
            }
            var rights: Set<AccessRight> = []
            let rightTexts = policy.stringArray("rights", required: true, issues: &issues)
            for (index, text) in (rightTexts ?? []).enumerated() {
                guard let right = AccessRight(rawValue: text.lowercased()) else {
                    issues.append(
                        ValidationIssue(
                            field: "\(field).rights[\(index)]", code: ValidationIssue.Code.invalidValue,
                            message: "unknown right \"\(text)\"; the rights are listen, send and manage"))
                    continue
                }
                rights.insert(right)
            }
            if rightTexts?.isEmpty == true {
                issues.append(
                    ValidationIssue(
                        field: "\(field).rights", code: ValidationIssue.Code.invalidValue, message: "a policy needs at least one right"))
            }
            let primary = requireKeys ? policy.string("primaryKey", required: true, issues: &issues) : ""
            let secondary = requireKeys ? policy.string("secondaryKey", required: true, issues: &issues) : ""
            if let name, let primary, let secondary {
                policies.append(HubPolicy(name: name, rights: rights, primaryKey: primary, secondaryKey: secondary))
            }
        }
        return policies
    }

    /// `quietHoursHoldBreaking`: true or false; nil when absent.
    static func readHoldBreaking(_ reader: JSONFieldReader, issues: inout [ValidationIssue]) -> Bool? {
        guard let member = reader.member("quietHoursHoldBreaking") else { return nil }
        guard case .bool(let flag) = member else {
            issues.append(JSONFieldReader.wrongType("quietHoursHoldBreaking", expected: "true or false", found: member))
            return nil
        }
        return flag
    }

    static func readLimits(_ reader: JSONFieldReader, issues: inout [ValidationIssue]) -> HubLimits {
        guard let limits = reader.object("limits", required: false, issues: &issues) else { return HubLimits() }
        limits.refuseUnknownMembers(known: Set(HubLimits.members.map(\.name)), issues: &issues)
        var read = HubLimits()
        for member in HubLimits.members {
            guard let value = limits.integer(member.name, required: false, issues: &issues) else { continue }
            guard member.range.contains(value) else {
                issues.append(
                    ValidationIssue(
                        field: "limits.\(member.name)", code: ValidationIssue.Code.invalidValue,
                        message: "\(member.name) is \(member.range.lowerBound) to \(member.range.upperBound); omit it for no limit"))
                continue
            }
            read[keyPath: member.path] = Int(value)
        }
        return read
    }
}

extension HubLimits {
    /// A `limits` object on its own (`{"maxRegistrations": 1000000, …}`), as the deployment's
    /// setting for the default hub gives it: the members and ranges of a hub document's `limits`.
    public static func decodeLimits(_ bytes: [UInt8]) throws(ValidationFailure) -> HubLimits {
        let root: JSONValue
        switch JSONFieldReader.parseObject(bytes.isEmpty ? Array("{}".utf8) : bytes, maximumBytes: 4_096, what: "the limits") {
        case .success(let value): root = .object([JSONMember(key: "limits", value: value)])
        case .failure(let failure): throw failure
        }
        var issues: [ValidationIssue] = []
        let limits = HubDefinition.readLimits(JSONFieldReader(root), issues: &issues)
        guard issues.isEmpty else { throw ValidationFailure(issues: issues) }
        return limits
    }
}

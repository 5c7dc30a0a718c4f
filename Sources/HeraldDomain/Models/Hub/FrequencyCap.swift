import Foundation

/// A frequency cap of a hub: a device receives at most `maxAlerts` alerts within the last
/// `windowSeconds`; an event of one of `urgencies` that would go past it is not pushed to that
/// device, which is counted as skipped `capped`. Every alert a device received counts, whatever
/// its urgency (a breaking alert fills the window too); only the events of the rule's urgencies
/// are held back by it, `normal` and `bulk` unless the rule names others, so breaking news goes
/// through unless the rule names `breaking`. Test sends, rehearsals and corrections neither
/// count nor are capped.
public struct FrequencyCap: Sendable, Hashable, Codable {
    public var maxAlerts: Int
    public var windowSeconds: Int
    /// Sorted in `Urgency.allCases` order, never empty.
    public var urgencies: [Urgency]

    public init(maxAlerts: Int, windowSeconds: Int, urgencies: [Urgency] = FrequencyCap.defaultUrgencies) {
        self.maxAlerts = maxAlerts
        self.windowSeconds = windowSeconds
        self.urgencies = Urgency.allCases.filter(urgencies.contains)
    }

    public static let defaultUrgencies: [Urgency] = [.normal, .bulk]
    public static let maxAlertsRange = 1...1_000
    /// A minute to 30 days: the alerts of the last 30 days are what is kept.
    public static let windowRange = 60...2_592_000
    /// Rules per hub.
    public static let maxRules = 8
    /// The skip reason of a device past a cap.
    public static let skipReason = "capped"

    /// The system tag of a registration's own cap (`$FrequencyCap:{2}`).
    public static let tagPrefix = "$FrequencyCap:"
    public static func tag(_ maxAlerts: Int) -> String { tagPrefix + "{\(maxAlerts)}" }
    /// On every registration with a cap of its own: the fan-out reads views for it only in
    /// slots that have one.
    public static let anyTag = tagPrefix + "{any}"

    /// The own cap named by a view's tag bytes, nil for any other tag.
    public static func override(fromTag tag: some StringProtocol) -> Int? {
        TagRules.systemTagValue(tag, prefix: tagPrefix).flatMap { Int($0) }
    }

    /// An issue when a registration's `frequencyCap` is set and out of `maxAlertsRange`.
    static func overrideIssue(_ value: Int?, field: String) -> ValidationIssue? {
        guard let value, !maxAlertsRange.contains(value) else { return nil }
        return ValidationIssue(
            field: field, code: ValidationIssue.Code.invalidValue,
            message:
                "frequencyCap is \(maxAlertsRange.lowerBound) to \(maxAlertsRange.upperBound) alerts per window of the hub's caps; got \(value)"
        )
    }

    /// Whether an event of `urgency` (nil: `normal`) is held back by this rule.
    public func applies(to urgency: Urgency?) -> Bool { urgencies.contains(urgency ?? .normal) }

    /// `3/86400` or `3/86400:normal+bulk+breaking` (the setting's form of one rule).
    public var settingText: String {
        let base = "\(maxAlerts)/\(windowSeconds)"
        return urgencies == Self.defaultUrgencies ? base : base + ":" + urgencies.map(\.rawValue).joined(separator: "+")
    }

    /// Reads rules from their setting form: rules separated by `,`, each `max/windowSeconds`
    /// with an optional `:urgency+urgency`. Empty text is no rule. The error names the rule
    /// and what is wrong with it.
    public static func parseList(_ text: String) throws(ValidationFailure) -> [FrequencyCap] {
        let rules = text.split(separator: ",", omittingEmptySubsequences: true).map { $0.trimmingCharacters(in: .whitespaces) }
        var caps: [FrequencyCap] = []
        var issues: [ValidationIssue] = []
        for (index, rule) in rules.enumerated() where !rule.isEmpty {
            let field = "frequencyCaps[\(index)]"
            let parts = rule.split(separator: ":", maxSplits: 1).map(String.init)
            let numbers = parts[0].split(separator: "/").map(String.init)
            guard numbers.count == 2, let max = Int(numbers[0]), let window = Int(numbers[1]) else {
                issues.append(
                    ValidationIssue(
                        field: field, code: ValidationIssue.Code.invalidValue,
                        message: "\"\(rule)\" is not a rule; write maxAlerts/windowSeconds, e.g. 3/86400, optionally :normal+bulk"))
                continue
            }
            var urgencies = defaultUrgencies
            var named = true
            if parts.count == 2 {
                urgencies = []
                for name in parts[1].split(separator: "+").map(String.init) {
                    guard let urgency = Urgency(rawValue: name) else {
                        issues.append(unknownUrgency(name, field: "\(field).urgencies"))
                        named = false
                        continue
                    }
                    urgencies.append(urgency)
                }
            }
            issues += problems(maxAlerts: max, windowSeconds: window, urgencies: named ? urgencies : nil, field: field)
            caps.append(FrequencyCap(maxAlerts: max, windowSeconds: window, urgencies: urgencies))
        }
        if caps.count > maxRules {
            issues.append(
                ValidationIssue(
                    field: "frequencyCaps", code: ValidationIssue.Code.invalidValue,
                    message: "\(caps.count) rules; a hub has at most \(maxRules)"))
        }
        if !issues.isEmpty { throw ValidationFailure(issues: issues) }
        return caps
    }

    /// Reads the `frequencyCaps` member of a hub document: an array of
    /// `{"maxAlerts", "windowSeconds", "urgencies"?}` (nil when the member is absent).
    static func read(_ reader: JSONFieldReader, issues: inout [ValidationIssue]) -> [FrequencyCap]? {
        guard let member = reader.member("frequencyCaps") else { return nil }
        guard case .array(let elements) = member else {
            issues.append(JSONFieldReader.wrongType("frequencyCaps", expected: "an array of rules", found: member))
            return nil
        }
        if elements.count > maxRules {
            issues.append(
                ValidationIssue(
                    field: "frequencyCaps", code: ValidationIssue.Code.invalidValue,
                    message: "\(elements.count) rules; a hub has at most \(maxRules)"))
            return nil
        }
        var caps: [FrequencyCap] = []
        for (index, element) in elements.enumerated() {
            let field = "frequencyCaps[\(index)]"
            guard case .object = element else {
                issues.append(JSONFieldReader.wrongType(field, expected: "an object", found: element))
                continue
            }
            let rule = JSONFieldReader(element, path: field)
            rule.refuseUnknownMembers(known: ["maxAlerts", "windowSeconds", "urgencies"], issues: &issues)
            let max = rule.integer("maxAlerts", required: true, issues: &issues)
            let window = rule.integer("windowSeconds", required: true, issues: &issues)
            var urgencies = defaultUrgencies
            var named = true
            if let names = rule.stringArray("urgencies", required: false, issues: &issues) {
                urgencies = []
                for (position, name) in names.enumerated() {
                    guard let urgency = Urgency(rawValue: name) else {
                        issues.append(unknownUrgency(name, field: "\(field).urgencies[\(position)]"))
                        named = false
                        continue
                    }
                    urgencies.append(urgency)
                }
            }
            guard let max, let window else { continue }
            let found = problems(
                maxAlerts: Int(clamping: max), windowSeconds: Int(clamping: window), urgencies: named ? urgencies : nil, field: field)
            issues += found
            if found.isEmpty, named { caps.append(FrequencyCap(maxAlerts: Int(max), windowSeconds: Int(window), urgencies: urgencies)) }
        }
        return caps
    }

    var jsonValue: JSONValue {
        .object([
            JSONMember(key: "maxAlerts", value: .number(String(maxAlerts))),
            JSONMember(key: "windowSeconds", value: .number(String(windowSeconds))),
            JSONMember(key: "urgencies", value: .array(urgencies.map { .string($0.rawValue) })),
        ])
    }

    /// The problems of a rule's numbers, and of its urgencies when they were all known (`nil`: an
    /// unknown one was reported already).
    private static func problems(maxAlerts: Int, windowSeconds: Int, urgencies: [Urgency]?, field: String) -> [ValidationIssue] {
        var issues: [ValidationIssue] = []
        if !maxAlertsRange.contains(maxAlerts) {
            issues.append(
                ValidationIssue(
                    field: "\(field).maxAlerts", code: ValidationIssue.Code.invalidValue,
                    message: "maxAlerts is \(maxAlertsRange.lowerBound) to \(maxAlertsRange.upperBound); got \(maxAlerts)"))
        }
        if !windowRange.contains(windowSeconds) {
            issues.append(
                ValidationIssue(
                    field: "\(field).windowSeconds", code: ValidationIssue.Code.invalidValue,
                    message:
                        "windowSeconds is \(windowRange.lowerBound) (a minute) to \(windowRange.upperBound) (30 days); got \(windowSeconds)"
                ))
        }
        if urgencies?.isEmpty == true {
            issues.append(
                ValidationIssue(
                    field: "\(field).urgencies", code: ValidationIssue.Code.invalidValue,
                    message: "a rule holds back at least one urgency (breaking, normal, bulk)"))
        }
        return issues
    }

    private static func unknownUrgency(_ name: String, field: String) -> ValidationIssue {
        ValidationIssue(
            field: field, code: ValidationIssue.Code.invalidValue,
            message: "unknown urgency \"\(name)\"; the urgencies are breaking, normal and bulk")
    }
}

extension [FrequencyCap] {
    /// The rules that hold back an event of `urgency`.
    public func applying(to urgency: Urgency?) -> [FrequencyCap] { filter { $0.applies(to: urgency) } }

    /// The longest window: how long a delivered alert must be remembered.
    public var longestWindowSeconds: Int { map(\.windowSeconds).max() ?? 0 }
}

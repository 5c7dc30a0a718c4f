import Foundation

extension NotificationEvent {
    /// Decodes and validates an event from untrusted bytes (a Kafka record value or an HTTP
    /// body). Every problem is reported with its field path: an oversized event, malformed
    /// JSON (line and column), wrong types, an empty `tags` string or array (never taken as
    /// a broadcast), an invalid tag expression (with its column), unknown platforms in
    /// `native`, nested property values, bad timestamps and priorities.
    public static func decode(_ bytes: some Collection<UInt8>, limits: EventLimits = .default) throws(ValidationFailure)
        -> NotificationEvent
    {
        switch JSONFieldReader.parseObject(bytes, maximumBytes: limits.maxBytes, what: "the event") {
        case .success(let root): return try decode(root, limits: limits)
        case .failure(let failure): throw failure
        }
    }

    /// Validates an event already parsed as JSON: the one reader of the event's fields, used
    /// for untrusted bytes and, with ``EventLimits/trusted``, for the copies inside fan-out
    /// tasks (`Codable`).
    static func decode(_ root: JSONValue, limits: EventLimits) throws(ValidationFailure) -> NotificationEvent {
        var issues: [ValidationIssue] = []
        let reader = JSONFieldReader(root)
        reader.refuseUnknownMembers(known: members, issues: &issues)

        let hub = reader.hub(issues: &issues)
        let id = reader.string("id", required: false, issues: &issues)
        if let id, let problem = IdentifierRules.eventIdProblem(id) {
            issues.append(ValidationIssue(field: "id", code: ValidationIssue.Code.invalidIdentifier, message: problem))
        }
        let audience = readAudience(reader.member("tags"), limits: limits, issues: &issues)
        let properties = readProperties(reader.member("properties"), limits: limits, issues: &issues)
        let native = readNative(reader.member("native"), payloadLimits: limits.payloadLimits, issues: &issues)
        let direct = readDirect(reader, native: native, issues: &issues)
        if direct != nil { issues += directSendIssues(reader) }
        let templates = reader.stringArray("templates", required: false, issues: &issues)
        if let templates {
            // An empty list sends the native payloads alone (Azure's native sends); without any,
            // it would deliver nothing.
            if templates.isEmpty && native.isEmpty {
                issues.append(
                    ValidationIssue(
                        field: "templates", code: ValidationIssue.Code.invalidValue,
                        message:
                            "an empty template list delivers to no template, and the event has no native payload; omit the field to deliver to all"
                    ))
            }
            for (position, name) in templates.enumerated() {
                if let problem = IdentifierRules.templateNameProblem(name) {
                    issues.append(
                        ValidationIssue(field: "templates[\(position)]", code: ValidationIssue.Code.invalidIdentifier, message: problem))
                }
            }
        }
        let expiresAt = reader.timestamp("expiresAt", issues: &issues)
        let publishedAt = reader.timestamp("publishedAt", issues: &issues)
        let priority: NotificationPriority? = reader.choice("priority", issues: &issues)
        let urgency: Urgency? = reader.choice("urgency", issues: &issues)
        let quietHours: QuietHoursPolicy? = reader.choice("quietHours", issues: &issues)
        let quietRelease = readQuietRelease(reader, issues: &issues)
        let collapseId = reader.string("collapseId", required: false, issues: &issues)
        if let collapseId {
            if collapseId.isEmpty {
                issues.append(
                    ValidationIssue(
                        field: "collapseId", code: ValidationIssue.Code.invalidValue,
                        message: "a collapse id cannot be empty; omit the field instead"))
            } else if let problem = HeaderFieldRules.valueProblem(collapseId) {
                issues.append(ValidationIssue(field: "collapseId", code: ValidationIssue.Code.invalidValue, message: problem))
            } else if collapseId.utf8.count > limits.maxCollapseIdBytes {
                issues.append(
                    ValidationIssue(
                        field: "collapseId", code: ValidationIssue.Code.invalidValue,
                        message: "collapse id is \(collapseId.utf8.count) bytes; the limit is \(limits.maxCollapseIdBytes)"
                    ))
            }
        }

        let schedule = readSchedule(reader, issues: &issues)
        let liveActivity = LiveActivityUpdate.read(reader, issues: &issues)
        let testRecipients = readTestRecipients(reader, issues: &issues)
        if testRecipients != nil, schedule != nil {
            issues.append(
                ValidationIssue(
                    field: "testRecipients", code: ValidationIssue.Code.invalidValue,
                    message: "a test send goes now: remove sendAt or sendAtLocal, or send the test first and schedule the real event"))
        }
        let correction = EventCorrection.read(reader, issues: &issues)
        if correction != nil {
            func refuse(_ field: String, _ message: String) {
                issues.append(ValidationIssue(field: field, code: ValidationIssue.Code.invalidValue, message: message))
            }
            if id == nil { refuse("id", "a correction names the event it corrects by its id") }
            if schedule != nil { refuse("correction", "a correction goes now: remove sendAt or sendAtLocal") }
            if testRecipients != nil { refuse("correction", "a correction goes to the original's devices: remove testRecipients") }
            if liveActivity != nil { refuse("correction", "a Live Activity is corrected by its next update, not by a correction") }
        }

        guard issues.isEmpty, let audience else { throw ValidationFailure(issues: issues) }
        var event = NotificationEvent(
            id: id, audience: audience, properties: properties, native: native, templates: templates,
            expiresAt: expiresAt, priority: priority, collapseId: collapseId, publishedAt: publishedAt, schedule: schedule,
            hub: hub, liveActivity: liveActivity, testRecipients: testRecipients, urgency: urgency, correction: correction
        )
        event.quietHours = quietHours
        event.quietRelease = quietRelease
        event.direct = direct
        return event
    }

    /// Reads `quietRelease` (`{"heldAt", "releaseAt"}`), which Herald sets on the release of
    /// alerts held for quiet hours.
    static func readQuietRelease(_ parent: JSONFieldReader, issues: inout [ValidationIssue]) -> QuietRelease? {
        guard let reader = parent.object("quietRelease", required: false, issues: &issues) else { return nil }
        reader.refuseUnknownMembers(known: ["heldAt", "releaseAt"], issues: &issues)
        let heldAt = reader.timestamp("heldAt", issues: &issues)
        let releaseAt = reader.timestamp("releaseAt", issues: &issues)
        guard let heldAt, let releaseAt else {
            if issues.isEmpty {
                issues.append(JSONFieldReader.missing(reader.fieldPath("releaseAt"), expected: "heldAt and releaseAt timestamps"))
            }
            return nil
        }
        return QuietRelease(heldAt: heldAt, releaseAt: releaseAt)
    }

    /// Reads `testRecipients`: 1 to ``TestRecipient/maxCount`` registration ids, installation
    /// ids or `$UserId:<id>` values; a repeated one counts once.
    static func readTestRecipients(_ reader: JSONFieldReader, issues: inout [ValidationIssue]) -> [TestRecipient]? {
        guard let entries = reader.stringArray("testRecipients", required: false, issues: &issues) else { return nil }
        if entries.isEmpty {
            issues.append(
                ValidationIssue(
                    field: "testRecipients", code: ValidationIssue.Code.invalidValue,
                    message: "an empty list tests on no device; omit the field for the real send"))
            return nil
        }
        if entries.count > TestRecipient.maxCount {
            issues.append(
                ValidationIssue(
                    field: "testRecipients", code: ValidationIssue.Code.tooLarge,
                    message: "\(entries.count) test recipients; the limit is \(TestRecipient.maxCount)"))
            return nil
        }
        var recipients: [TestRecipient] = []
        for (position, entry) in entries.enumerated() {
            switch TestRecipient.parse(entry) {
            case .success(let recipient):
                if !recipients.contains(recipient) { recipients.append(recipient) }
            case .failure(let problem):
                issues.append(
                    ValidationIssue(
                        field: "testRecipients[\(position)]", code: ValidationIssue.Code.invalidIdentifier, message: problem.message))
            }
        }
        return recipients
    }

    /// The members an event may have.
    static let members: Set<String> = [
        "hub", "id", "tags", "properties", "native", "templates", "expiresAt", "publishedAt", "priority", "collapseId", "sendAt",
        "sendAtLocal", "liveActivity", "testRecipients", "urgency", "correction", "quietHours", "quietRelease", "direct",
    ]

    /// Reads `sendAt` (an instant with its offset) or `sendAtLocal` (a wall-clock time
    /// without one); giving both is an issue, and so is each written in the other's form.
    static func readSchedule(_ reader: JSONFieldReader, issues: inout [ValidationIssue]) -> EventSchedule? {
        let instantText = reader.string("sendAt", required: false, issues: &issues)
        let localText = reader.string("sendAtLocal", required: false, issues: &issues)
        if instantText != nil && localText != nil {
            issues.append(
                ValidationIssue(
                    field: "sendAtLocal", code: ValidationIssue.Code.invalidSchedule,
                    message: "give sendAt (one instant) or sendAtLocal (each device's local time), not both"
                ))
            return nil
        }
        if let text = instantText {
            if let instant = ISO8601Timestamp.parse(text) { return .at(instant) }
            let hint =
                LocalDateTime.parse(text) != nil
                ? "it has no offset; add one (\(text)Z or \(text)+01:00), or use sendAtLocal for each device's local time"
                : "expected an RFC 3339 instant such as 2026-11-25T07:30:00Z"
            issues.append(
                ValidationIssue(field: "sendAt", code: ValidationIssue.Code.invalidTimestamp, message: "\"\(text)\": \(hint)"))
        }
        if let text = localText {
            if let local = LocalDateTime.parse(text) { return .localTime(local) }
            let hint =
                ISO8601Timestamp.parse(text) != nil
                ? "a local time has no offset or Z (2026-11-25T07:30:00); use sendAt for one instant"
                : "expected a wall-clock time such as 2026-11-25T07:30:00"
            issues.append(
                ValidationIssue(field: "sendAtLocal", code: ValidationIssue.Code.invalidTimestamp, message: "\"\(text)\": \(hint)"))
        }
        return nil
    }

    /// Reads `tags`: absent or null is a broadcast; a string is an expression; an array of
    /// tags means any of them. An empty string or array is an error, never a broadcast,
    /// because a bug that loses the audience must not notify everyone.
    static func readAudience(_ value: JSONValue?, limits: EventLimits, issues: inout [ValidationIssue]) -> Audience? {
        guard let value else { return .broadcast }
        switch value {
        case .string(let text):
            guard !text.allSatisfy(\.isWhitespace) else {
                issues.append(
                    ValidationIssue(
                        field: "tags", code: ValidationIssue.Code.emptyTags,
                        message: "tags is an empty expression; omit the field to broadcast to every registration"
                    ))
                return nil
            }
            return parseExpression(text, limits: limits, issues: &issues)
        case .array(let elements):
            guard !elements.isEmpty else {
                issues.append(
                    ValidationIssue(
                        field: "tags", code: ValidationIssue.Code.emptyTags,
                        message: "tags is an empty list; omit the field to broadcast to every registration"
                    ))
                return nil
            }
            var tags: [String] = []
            for (position, element) in elements.enumerated() {
                guard case .string(let tag) = element else {
                    issues.append(JSONFieldReader.wrongType("tags[\(position)]", expected: "a tag (string)", found: element))
                    continue
                }
                if let problem = TagRules.problem(with: tag) {
                    issues.append(ValidationIssue(field: "tags[\(position)]", code: ValidationIssue.Code.invalidTag, message: problem))
                    continue
                }
                tags.append(tag)
            }
            guard tags.count == elements.count else { return nil }
            return parseExpression(tags.joined(separator: " || "), limits: limits, issues: &issues)
        default:
            issues.append(JSONFieldReader.wrongType("tags", expected: "a tag expression (string) or an array of tags", found: value))
            return nil
        }
    }

    static func parseExpression(_ text: String, limits: EventLimits, issues: inout [ValidationIssue]) -> Audience? {
        do {
            let expression = try TagExpression.parse(text, limits: limits.tagExpression)
            return .expression(expression, source: text)
        } catch {
            issues.append(ValidationIssue(field: "tags", code: ValidationIssue.Code.invalidTagExpression, message: error.description))
            return nil
        }
    }

    static func readProperties(_ value: JSONValue?, limits: EventLimits, issues: inout [ValidationIssue]) -> [String: String] {
        guard let value else { return [:] }
        guard case .object(let members) = value else {
            issues.append(JSONFieldReader.wrongType("properties", expected: "an object", found: value))
            return [:]
        }
        if members.count > limits.maxProperties {
            issues.append(
                ValidationIssue(
                    field: "properties", code: ValidationIssue.Code.tooLarge,
                    message: "\(members.count) properties; the limit is \(limits.maxProperties)"
                ))
        }
        var properties: [String: String] = [:]
        var seenLowercased: [String: String] = [:]
        for member in members {
            let field = "properties.\(member.key)"
            let text: String
            switch member.value {
            case .string(let string): text = string
            case .number(let number): text = number
            case .bool(let flag): text = flag ? "true" : "false"
            // A null property is treated as not given, which templates render as "" or
            // their default.
            case .null: continue
            case .array, .object:
                issues.append(
                    JSONFieldReader.wrongType(field, expected: "a string, number or boolean (properties are flat)", found: member.value))
                continue
            }
            // Template property names are case-insensitive, so two names that differ only
            // in case would make rendering depend on which one wins.
            let folded = member.key.lowercased()
            if let earlier = seenLowercased[folded], earlier != member.key || properties[member.key] != nil {
                issues.append(
                    ValidationIssue(
                        field: field, code: ValidationIssue.Code.duplicateProperty,
                        message: "property \"\(member.key)\" repeats \"\(earlier)\" (names are case-insensitive)"
                    ))
                continue
            }
            seenLowercased[folded] = member.key
            properties[member.key] = text
        }
        return properties
    }

    /// The native payloads by platform: JSON objects for APNs, FCM and web push, an object or
    /// a well-formed XML string for WNS, each within its platform's payload limit.
    static func readNative(_ value: JSONValue?, payloadLimits: PayloadLimits, issues: inout [ValidationIssue]) -> [Platform: String] {
        guard let value else { return [:] }
        guard case .object(let members) = value else {
            issues.append(JSONFieldReader.wrongType("native", expected: "an object of payloads by platform", found: value))
            return [:]
        }
        var native: [Platform: String] = [:]
        for member in members {
            let field = "native.\(member.key)"
            guard let platform = Platform(rawValue: member.key) else {
                issues.append(Platform.unknownIssue(field: field, text: member.key))
                continue
            }
            let payload: String
            switch member.value {
            case .object:
                payload = member.value.compactText(sortingKeys: true)
            case .string(let xml) where platform == .wns:
                if let problem = Self.xmlProblem(xml) {
                    issues.append(
                        ValidationIssue(field: field, code: ValidationIssue.Code.invalidValue, message: "not well-formed XML: \(problem)"))
                    continue
                }
                payload = xml
            default:
                let expected = platform == .wns ? "an object or a string of XML" : "an object (the platform's payload)"
                issues.append(JSONFieldReader.wrongType(field, expected: expected, found: member.value))
                continue
            }
            let limit = payloadLimits[platform]
            guard payload.utf8.count <= limit else {
                issues.append(
                    ValidationIssue(
                        field: field, code: ValidationIssue.Code.payloadTooLarge,
                        message: "the payload is \(payload.utf8.count) bytes; the \(platform) payload limit is \(limit)"
                    ))
                continue
            }
            native[platform] = payload
        }
        return native
    }

    /// Why `xml` is not well-formed XML, or nil. Checked with the template scanner, which
    /// checks well-formedness as it compiles (a native payload has no expressions to render).
    public static func xmlProblem(_ xml: String) -> String? {
        do {
            _ = try CompiledTemplate.compile(xml, format: .xml)
            return nil
        } catch {
            return "line \(error.line), column \(error.column): \(error.message)"
        }
    }
}

/// Trusted copies of a validated event (inside fan-out tasks) travel as the contract's JSON:
/// encoded as ``canonicalJSON()`` is, decoded by the same field reader as untrusted events
/// (``decode(_:limits:)``) with ``EventLimits/trusted``, so there is one reader of the shape.
/// Re-validating a copy costs microseconds per task; a second, lenient decoder would be a
/// second definition of the event to keep in step.
extension NotificationEvent: Codable {
    public init(from decoder: any Decoder) throws {
        do {
            self = try Self.decode(try JSONValue(from: decoder), limits: .trusted)
        } catch let failure as ValidationFailure {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(codingPath: decoder.codingPath, debugDescription: "invalid event: \(failure)"))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        try canonicalValue().encode(to: encoder)
    }

    /// A stored native payload as JSON: objects are re-parsed, WNS XML stays a string.
    static func nativeJSON(_ text: String) -> JSONValue {
        if text.utf8.first == UInt8(ascii: "{"), let value = try? JSONValue.parse(text) {
            return value
        }
        return .string(text)
    }

    /// What makes two records with the same id the same event: the canonical JSON without
    /// `publishedAt` (a retry is published again, later). A reused id whose content differs
    /// is a conflict, not a retry.
    public func contentJSON() -> [UInt8] {
        var content = self
        content.publishedAt = nil
        return content.canonicalJSON()
    }

    /// The event as compact JSON in the contract's field order, with native payloads
    /// written byte for byte as stored. Decoding this with ``decode(_:limits:)`` gives the
    /// same event back.
    public func canonicalJSON() -> [UInt8] {
        var bytes: [UInt8] = []
        canonicalValue().write(into: &bytes)
        return bytes
    }

    /// The canonical JSON as a value, members in the contract's order.
    func canonicalValue() -> JSONValue {
        var members: [JSONMember] = []
        if !hub.isDefault { members.append(JSONMember(key: "hub", value: .string(hub.rawValue))) }
        if let id { members.append(JSONMember(key: "id", value: .string(id))) }
        if case .expression(_, let source) = audience { members.append(JSONMember(key: "tags", value: .string(source))) }
        members.append(
            JSONMember(
                key: "properties",
                value: .object(
                    properties.sorted { $0.key < $1.key }.map { JSONMember(key: $0.key, value: .string($0.value)) }
                )))
        if !native.isEmpty {
            members.append(
                JSONMember(
                    key: "native",
                    value: .object(
                        native.sorted { $0.key.rawValue < $1.key.rawValue }.map {
                            JSONMember(key: $0.key.rawValue, value: Self.nativeJSON($0.value))
                        }
                    )))
        }
        if let templates { members.append(JSONMember(key: "templates", value: .array(templates.map(JSONValue.string)))) }
        if let expiresAt {
            members.append(JSONMember(key: "expiresAt", value: .string(ISO8601Timestamp.format(expiresAt, precision: .secondsWhenExact))))
        }
        if let priority { members.append(JSONMember(key: "priority", value: .string(priority.rawValue))) }
        if let urgency { members.append(JSONMember(key: "urgency", value: .string(urgency.rawValue))) }
        if let collapseId { members.append(JSONMember(key: "collapseId", value: .string(collapseId))) }
        if let publishedAt { members.append(JSONMember(key: "publishedAt", value: .string(ISO8601Timestamp.format(publishedAt)))) }
        switch schedule {
        case .at(let instant):
            members.append(JSONMember(key: "sendAt", value: .string(ISO8601Timestamp.format(instant, precision: .secondsWhenExact))))
        case .localTime(let local):
            members.append(JSONMember(key: "sendAtLocal", value: .string(local.description)))
        case nil: break
        }
        if let liveActivity { members.append(JSONMember(key: "liveActivity", value: liveActivity.jsonValue)) }
        if let testRecipients {
            members.append(JSONMember(key: "testRecipients", value: .array(testRecipients.map { .string($0.text) })))
        }
        if let direct { members.append(JSONMember(key: "direct", value: .array(direct.map(\.jsonValue)))) }
        if let correction { members.append(JSONMember(key: "correction", value: correction.jsonValue)) }
        if let quietHours { members.append(JSONMember(key: "quietHours", value: .string(quietHours.rawValue))) }
        if let quietRelease {
            members.append(
                JSONMember(
                    key: "quietRelease",
                    value: .object([
                        JSONMember(key: "heldAt", value: .string(ISO8601Timestamp.format(quietRelease.heldAt))),
                        JSONMember(key: "releaseAt", value: .string(ISO8601Timestamp.format(quietRelease.releaseAt))),
                    ])))
        }
        return .object(members)
    }
}

extension Registration {
    /// Every problem with this registration, each with its field path; empty when valid.
    /// Compiles the template body (and header and expiry templates), so a template that
    /// would fail at send time is refused at registration time instead.
    public func validate(limits: RegistrationLimits = .default) -> [ValidationIssue] {
        var issues: [ValidationIssue] = []
        if let problem = IdentifierRules.registrationIdProblem(registrationId) {
            issues.append(ValidationIssue(field: "registrationId", code: ValidationIssue.Code.invalidIdentifier, message: problem))
        }
        if let issue = platform.handleIssue(handle, field: "handle") {
            issues.append(issue)
        }
        TagListValidation.check(tags, field: "tags", maxTags: limits.maxTags, into: &issues)
        if let template {
            template.check(platform: platform, field: "template", limits: limits, into: &issues)
        }
        if let issue = TimeZoneRules.issue(timeZone, field: "timeZone") { issues.append(issue) }
        if let issue = QuietHours.issue(quietHours, field: "quietHours") { issues.append(issue) }
        if let issue = FrequencyCap.overrideIssue(frequencyCap, field: "frequencyCap") { issues.append(issue) }
        if tokenKind != .device {
            if platform != .apns {
                issues.append(
                    ValidationIssue(
                        field: "tokenKind", code: ValidationIssue.Code.invalidValue,
                        message: "Live Activity and push-to-start tokens are APNs tokens; this registration is for \(platform.rawValue)"))
            }
            if template != nil {
                issues.append(
                    ValidationIssue(
                        field: "template", code: ValidationIssue.Code.invalidValue,
                        message: "a \(tokenKind.rawValue) registration has no template: it receives what an event's liveActivity says"))
            }
        }
        if version < 0 {
            issues.append(ValidationIssue(field: "version", code: ValidationIssue.Code.invalidValue, message: "version cannot be negative"))
        }
        return issues
    }

    /// Throws every problem ``validate(limits:)`` finds.
    public func validated(limits: RegistrationLimits = .default) throws(ValidationFailure) -> Registration {
        let issues = validate(limits: limits)
        if !issues.isEmpty { throw ValidationFailure(issues: issues) }
        return self
    }
}

/// The tag checks shared by registrations, installations and installation templates.
enum TagListValidation {
    static func check(_ tags: [String], field: String, maxTags: Int, into issues: inout [ValidationIssue]) {
        if tags.count > maxTags {
            issues.append(
                ValidationIssue(
                    field: field, code: ValidationIssue.Code.tooManyTags,
                    message: "\(tags.count) tags; the limit is \(maxTags)"
                ))
        }
        for (position, tag) in tags.enumerated() {
            if let problem = TagRules.problem(with: tag) {
                issues.append(ValidationIssue(field: "\(field)[\(position)]", code: ValidationIssue.Code.invalidTag, message: problem))
            } else if tag.hasPrefix(TagRules.timeZonePrefix) {
                issues.append(
                    ValidationIssue(
                        field: "\(field)[\(position)]", code: ValidationIssue.Code.invalidTag,
                        message: "\(TagRules.timeZonePrefix) tags come from the timeZone field; set timeZone instead"
                    ))
            } else if tag.hasPrefix(FrequencyCap.tagPrefix) {
                issues.append(
                    ValidationIssue(
                        field: "\(field)[\(position)]", code: ValidationIssue.Code.invalidTag,
                        message: "\(FrequencyCap.tagPrefix) tags come from the frequencyCap field; set frequencyCap instead"
                    ))
            } else if tag.hasPrefix(QuietHours.tagPrefix) {
                issues.append(
                    ValidationIssue(
                        field: "\(field)[\(position)]", code: ValidationIssue.Code.invalidTag,
                        message: "\(QuietHours.tagPrefix) tags come from the quietHours field; set quietHours instead"
                    ))
            }
        }
    }
}

extension RegistrationTemplate {
    /// Appends this template's problems, with paths under `field` (for example
    /// `template.body` or `templates.news.headers.apns-push-type`).
    func check(platform: Platform, field: String, limits: RegistrationLimits, into issues: inout [ValidationIssue], checkName: Bool = true)
    {
        if checkName, let problem = IdentifierRules.templateNameProblem(name) {
            issues.append(ValidationIssue(field: "\(field).name", code: ValidationIssue.Code.invalidIdentifier, message: problem))
        }
        let bodyBytes = body.utf8.count
        if bodyBytes > limits.maxTemplateBodyBytes {
            issues.append(
                ValidationIssue(
                    field: "\(field).body", code: ValidationIssue.Code.templateTooLarge,
                    message: "template body is \(bodyBytes) bytes; the limit is \(limits.maxTemplateBodyBytes)"
                ))
        } else {
            let compiled = Self.compile(
                body, format: platform.templateFormat, field: "\(field).body", what: "template body", limits: limits, into: &issues)
            if let compiled {
                Self.checkExpansion(compiled, platform: platform, field: "\(field).body", limits: limits, into: &issues)
            }
        }
        if headers.count > limits.maxHeaders {
            issues.append(
                ValidationIssue(
                    field: "\(field).headers", code: ValidationIssue.Code.invalidHeader,
                    message: "\(headers.count) headers; the limit is \(limits.maxHeaders)"
                ))
        }
        let blockBytes = headers.reduce(0) { $0 + HeaderFieldRules.fieldSize(name: $1.key, value: $1.value) }
        if blockBytes > limits.maxHeaderBlockBytes {
            issues.append(
                ValidationIssue(
                    field: "\(field).headers", code: ValidationIssue.Code.invalidHeader,
                    message:
                        "the header templates add up to \(blockBytes) bytes (name + value + 32 per header, as HTTP/2 counts them); the limit is \(limits.maxHeaderBlockBytes)"
                ))
        }
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) {
            let headerField = "\(field).headers.\(name)"
            if let problem = Self.headerNameProblem(name) {
                issues.append(ValidationIssue(field: headerField, code: ValidationIssue.Code.invalidHeader, message: problem))
            }
            if let problem = HeaderFieldRules.valueProblem(value) {
                issues.append(ValidationIssue(field: headerField, code: ValidationIssue.Code.invalidHeader, message: problem))
            } else if value.utf8.count > limits.maxHeaderValueBytes {
                issues.append(
                    ValidationIssue(
                        field: headerField, code: ValidationIssue.Code.invalidHeader,
                        message: "header value is \(value.utf8.count) bytes; the limit is \(limits.maxHeaderValueBytes)"
                    ))
            } else {
                Self.compile(value, format: .text, field: headerField, what: "header template", limits: limits, into: &issues)
            }
        }
        if let expiry {
            if let problem = HeaderFieldRules.valueProblem(expiry) {
                issues.append(ValidationIssue(field: "\(field).expiry", code: ValidationIssue.Code.invalidTemplate, message: problem))
            } else if expiry.utf8.count > limits.maxHeaderValueBytes {
                issues.append(
                    ValidationIssue(
                        field: "\(field).expiry", code: ValidationIssue.Code.invalidTemplate,
                        message: "expiry template is \(expiry.utf8.count) bytes; the limit is \(limits.maxHeaderValueBytes)"
                    ))
            } else {
                Self.compile(expiry, format: .text, field: "\(field).expiry", what: "expiry template", limits: limits, into: &issues)
            }
        }
    }

    @discardableResult
    static func compile(
        _ text: String, format: TemplateFormat, field: String, what: String, limits: RegistrationLimits,
        into issues: inout [ValidationIssue]
    ) -> CompiledTemplate? {
        do {
            return try CompiledTemplate.compile(text, format: format, limits: limits.templateLimits)
        } catch {
            issues.append(
                ValidationIssue(
                    field: field, code: ValidationIssue.Code.invalidTemplate,
                    message: "\(what) is invalid at line \(error.line), column \(error.column): \(error.message)"
                ))
            return nil
        }
    }

    /// Refuses bodies that cannot fit the platform's payload limit: fixed text over it, or
    /// more unclipped copies of property values than `maxUnboundedSubstitutions`.
    static func checkExpansion(
        _ body: CompiledTemplate, platform: Platform, field: String, limits: RegistrationLimits, into issues: inout [ValidationIssue]
    ) {
        let payloadLimit = limits.payloadLimits[platform]
        if body.fixedBytes > payloadLimit {
            issues.append(
                ValidationIssue(
                    field: field, code: ValidationIssue.Code.templateAmplification,
                    message:
                        "the template's fixed text renders \(body.fixedBytes) bytes before any property; the \(platform) payload limit is \(payloadLimit)"
                ))
        }
        if body.unboundedSubstitutions > limits.maxUnboundedSubstitutions {
            issues.append(
                ValidationIssue(
                    field: field, code: ValidationIssue.Code.templateAmplification,
                    message:
                        "the template copies whole property values \(body.unboundedSubstitutions) times; the limit is \(limits.maxUnboundedSubstitutions) (clip values with $(name, n) to use more)"
                ))
        }
    }

    /// HTTP header names are RFC 9110 tokens.
    static func headerNameProblem(_ name: String) -> String? {
        if name.isEmpty { return "a header name cannot be empty" }
        let separators = Set("\"(),/:;<=>?@[\\]{}".utf8)
        for (position, byte) in name.utf8.enumerated() where byte <= 0x20 || byte >= 0x7F || separators.contains(byte) {
            return
                "a header name is an HTTP token (letters, digits and !#$%&'*+-.^_`|~); found \(Platform.describe(name, at: position)) at position \(position + 1)"
        }
        return nil
    }
}

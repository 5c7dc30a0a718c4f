extension Installation {
    /// Every problem with this installation, each with its field path (`pushChannel`,
    /// `templates.news.body`, `templates.news.tags[2]`, ...); empty when valid.
    public func validate(limits: RegistrationLimits = .default) -> [ValidationIssue] {
        var issues: [ValidationIssue] = []
        if let problem = IdentifierRules.installationIdProblem(installationId) {
            issues.append(ValidationIssue(field: "installationId", code: ValidationIssue.Code.invalidIdentifier, message: problem))
        } else if let problem = TagRules.problem(with: installationTag) {
            issues.append(ValidationIssue(field: "installationId", code: ValidationIssue.Code.invalidIdentifier, message: problem))
        }
        if let issue = platform.handleIssue(pushChannel, field: "pushChannel") {
            issues.append(issue)
        }
        if let userId, let userTag {
            if userId.isEmpty {
                issues.append(
                    ValidationIssue(field: "userId", code: ValidationIssue.Code.invalidIdentifier, message: "a user id cannot be empty"))
            } else if let problem = TagRules.problem(with: userTag) {
                issues.append(
                    ValidationIssue(
                        field: "userId", code: ValidationIssue.Code.invalidIdentifier,
                        message: "user id cannot form the tag \(userTag): \(problem)"))
            }
        }
        TagListValidation.check(tags, field: "tags", maxTags: limits.maxTags, into: &issues)
        if let issue = TimeZoneRules.issue(timeZone, field: "timeZone") { issues.append(issue) }
        if let issue = QuietHours.issue(quietHours, field: "quietHours") { issues.append(issue) }
        if let issue = FrequencyCap.overrideIssue(frequencyCap, field: "frequencyCap") { issues.append(issue) }
        if templates.count > limits.maxInstallationTemplates {
            issues.append(
                ValidationIssue(
                    field: "templates", code: ValidationIssue.Code.invalidValue,
                    message: "\(templates.count) templates; the limit is \(limits.maxInstallationTemplates)"
                ))
        }
        for (name, template) in templates.sorted(by: { $0.key < $1.key }) {
            let field = "templates.\(name)"
            if let problem = IdentifierRules.templateNameProblem(name) {
                issues.append(ValidationIssue(field: field, code: ValidationIssue.Code.invalidIdentifier, message: problem))
            }
            let asRegistrationTemplate = RegistrationTemplate(
                name: name, body: template.body, headers: template.headers, expiry: template.expiry)
            asRegistrationTemplate.check(platform: platform, field: field, limits: limits, into: &issues, checkName: false)
            let totalTags = Set(tags + template.tags).count + 2
            if totalTags > limits.maxTags, template.tags.count <= limits.maxTags {
                issues.append(
                    ValidationIssue(
                        field: "\(field).tags", code: ValidationIssue.Code.tooManyTags,
                        message: "with the installation's tags this template has \(totalTags) tags; the limit is \(limits.maxTags)"
                    ))
            }
            TagListValidation.check(template.tags, field: "\(field).tags", maxTags: limits.maxTags, into: &issues)
        }
        return issues
    }

    /// Throws every problem ``validate(limits:)`` finds.
    public func validated(limits: RegistrationLimits = .default) throws(ValidationFailure) -> Installation {
        let issues = validate(limits: limits)
        if !issues.isEmpty { throw ValidationFailure(issues: issues) }
        return self
    }
}

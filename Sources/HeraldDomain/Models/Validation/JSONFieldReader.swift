import Foundation

/// Reads typed fields out of a parsed JSON object while recording, instead of throwing,
/// every missing or mistyped field with its path. Decoders of untrusted documents use it
/// so one bad request lists all its problems at once.
struct JSONFieldReader {
    let value: JSONValue
    let path: String

    init(_ value: JSONValue, path: String = "") {
        self.value = value
        self.path = path
    }

    func fieldPath(_ name: String) -> String {
        path.isEmpty ? name : "\(path).\(name)"
    }

    /// An issue for each member of this object not in `known`: a misspelt field, or one of an
    /// API this document is not for (`"dryRun": true` in an event), must never be dropped
    /// without a word.
    func refuseUnknownMembers(known: Set<String>, issues: inout [ValidationIssue]) {
        guard case .object(let members) = value else { return }
        var reported: Set<String> = []
        for member in members where !known.contains(member.key) && reported.insert(member.key).inserted {
            issues.append(
                ValidationIssue(
                    field: fieldPath(member.key), code: ValidationIssue.Code.unknownField,
                    message: "unknown member \"\(member.key)\"; the members are \(known.sorted().joined(separator: ", "))"))
        }
    }

    /// The member `name`, treating an explicit `null` as absent.
    func member(_ name: String) -> JSONValue? {
        guard let member = value[name], member != .null else { return nil }
        return member
    }

    func string(_ name: String, required: Bool, issues: inout [ValidationIssue]) -> String? {
        guard let member = member(name) else {
            if required { issues.append(Self.missing(fieldPath(name), expected: "a string")) }
            return nil
        }
        guard case .string(let text) = member else {
            issues.append(Self.wrongType(fieldPath(name), expected: "a string", found: member))
            return nil
        }
        return text
    }

    /// An optional member naming one of `Value`'s cases; an unknown name is an issue that lists
    /// them all (`unknown urgency "urgent"; expected "breaking", "normal" or "bulk"`).
    func choice<Value: RawRepresentable & CaseIterable>(_ name: String, issues: inout [ValidationIssue]) -> Value?
    where Value.RawValue == String {
        guard let text = string(name, required: false, issues: &issues) else { return nil }
        if let value = Value(rawValue: text) { return value }
        let names = Value.allCases.map { "\"\($0.rawValue)\"" }
        let listed = names.count > 1 ? names.dropLast().joined(separator: ", ") + " or " + names.last! : names.joined()
        issues.append(
            ValidationIssue(
                field: fieldPath(name), code: ValidationIssue.Code.invalidValue, message: "unknown \(name) \"\(text)\"; expected \(listed)")
        )
        return nil
    }

    func integer(_ name: String, required: Bool, issues: inout [ValidationIssue]) -> Int64? {
        guard let member = member(name) else {
            if required { issues.append(Self.missing(fieldPath(name), expected: "an integer")) }
            return nil
        }
        guard case .number(let text) = member, let integer = Int64(text) else {
            issues.append(Self.wrongType(fieldPath(name), expected: "an integer", found: member))
            return nil
        }
        return integer
    }

    func timestamp(_ name: String, issues: inout [ValidationIssue]) -> Date? {
        guard let text = string(name, required: false, issues: &issues) else { return nil }
        guard let date = ISO8601Timestamp.parse(text) else {
            issues.append(
                ValidationIssue(
                    field: fieldPath(name), code: ValidationIssue.Code.invalidTimestamp,
                    message: "\"\(text)\" is not an ISO-8601 timestamp such as 2026-11-21T19:00:00Z"
                ))
            return nil
        }
        return date
    }

    func stringArray(_ name: String, required: Bool, issues: inout [ValidationIssue]) -> [String]? {
        guard let member = member(name) else {
            if required { issues.append(Self.missing(fieldPath(name), expected: "an array of strings")) }
            return nil
        }
        guard case .array(let elements) = member else {
            issues.append(Self.wrongType(fieldPath(name), expected: "an array of strings", found: member))
            return nil
        }
        var strings: [String] = []
        strings.reserveCapacity(elements.count)
        var allStrings = true
        for (position, element) in elements.enumerated() {
            if case .string(let text) = element {
                strings.append(text)
            } else {
                allStrings = false
                issues.append(Self.wrongType("\(fieldPath(name))[\(position)]", expected: "a string", found: element))
            }
        }
        return allStrings ? strings : nil
    }

    func stringMap(_ name: String, issues: inout [ValidationIssue]) -> [String: String]? {
        guard let member = member(name) else { return nil }
        guard case .object(let members) = member else {
            issues.append(Self.wrongType(fieldPath(name), expected: "an object of strings", found: member))
            return nil
        }
        var map: [String: String] = [:]
        for entry in members {
            if case .string(let text) = entry.value {
                map[entry.key] = text
            } else {
                issues.append(Self.wrongType("\(fieldPath(name)).\(entry.key)", expected: "a string", found: entry.value))
            }
        }
        return map
    }

    /// A nested object as its own reader, or `nil` (with an issue if it has the wrong type).
    func object(_ name: String, required: Bool, issues: inout [ValidationIssue]) -> JSONFieldReader? {
        guard let member = member(name) else {
            if required { issues.append(Self.missing(fieldPath(name), expected: "an object")) }
            return nil
        }
        guard case .object = member else {
            issues.append(Self.wrongType(fieldPath(name), expected: "an object", found: member))
            return nil
        }
        return JSONFieldReader(member, path: fieldPath(name))
    }

    func platform(_ name: String, issues: inout [ValidationIssue]) -> Platform? {
        guard let text = string(name, required: true, issues: &issues) else { return nil }
        guard let platform = Platform(rawValue: text) else {
            issues.append(Platform.unknownIssue(field: fieldPath(name), text: text))
            return nil
        }
        return platform
    }

    // MARK: Issues

    static func missing(_ field: String, expected: String) -> ValidationIssue {
        ValidationIssue(field: field, code: ValidationIssue.Code.missingField, message: "required field is missing; expected \(expected)")
    }

    static func wrongType(_ field: String, expected: String, found: JSONValue) -> ValidationIssue {
        ValidationIssue(
            field: field, code: ValidationIssue.Code.invalidType, message: "expected \(expected), found \(found.kindDescription)")
    }

    /// Parses `bytes` as a JSON object, or returns the issue that says why it is not one.
    static func parseObject(_ bytes: some Collection<UInt8>, maximumBytes: Int, what: String) -> Result<JSONValue, ValidationFailure> {
        if bytes.count > maximumBytes {
            return .failure(
                ValidationFailure(issues: [
                    ValidationIssue(
                        field: "", code: ValidationIssue.Code.tooLarge,
                        message: "\(what) is \(bytes.count) bytes; the limit is \(maximumBytes)"
                    )
                ]))
        }
        let value: JSONValue
        do {
            value = try JSONValue.parse(bytes)
        } catch {
            return .failure(
                ValidationFailure(issues: [
                    ValidationIssue(
                        field: "", code: ValidationIssue.Code.malformedJSON,
                        message: "\(what) is not valid JSON: \(error.description)"
                    )
                ]))
        }
        guard case .object = value else {
            return .failure(
                ValidationFailure(issues: [
                    ValidationIssue(
                        field: "", code: ValidationIssue.Code.invalidType,
                        message: "\(what) must be a JSON object, found \(value.kindDescription)"
                    )
                ]))
        }
        return .success(value)
    }
}

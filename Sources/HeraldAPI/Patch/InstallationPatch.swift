import HeraldDomain

/// Which parts of an installation a JSON Patch may touch, and Azure Notification Hubs'
/// tag semantics on top of RFC 6902:
///
/// | path | operations |
/// |---|---|
/// | `/pushChannel` | add, replace |
/// | `/userId`, `/expiresAt` | add, replace, remove |
/// | `/tags` | add (a string or an array: each tag not yet present is appended), replace (an array), remove (all tags) |
/// | `/tags/-` | add (appends one tag unless present) |
/// | `/tags/{tag}` | remove (by tag value, as Azure does; removing an absent tag is a no-op) |
/// | `/templates/{name}` | add, replace, remove |
/// | `/templates/{name}/body`, `/headers`, `/expiry` | add, replace, remove |
/// | `/templates/{name}/tags`, `/tags/-`, `/tags/{tag}` | as for `/tags` |
///
/// `installationId` and `platform` cannot be patched (PUT a new installation instead).
enum InstallationPatch {
    static func apply(_ patch: JSONPatch, to document: JSONValue) throws(JSONPatchError) -> JSONValue {
        var document = document
        for (position, step) in patch.steps.enumerated() {
            let field = "[\(position)].path"
            for basic in try translate(step, in: document, field: field, valueField: "[\(position)].value") {
                document = try JSONPatch.apply(basic, to: document, field: field)
            }
        }
        return document
    }

    /// The plain RFC 6902 steps that perform `step` on `document`.
    static func translate(_ step: JSONPatch.Step, in document: JSONValue, field: String, valueField: String) throws(JSONPatchError)
        -> [JSONPatch.Step]
    {
        let tokens = step.path.tokens
        let notAllowed = JSONPatchError(
            code: JSONPatchError.Code.pathNotAllowed,
            message: "\(step.operation.rawValue) \(step.path) is not allowed on an installation; see the PATCH table in docs/api.md",
            field: field
        )
        switch tokens.count {
        case 1:
            switch (tokens[0], step.operation) {
            case ("pushChannel", .add), ("pushChannel", .replace), ("userId", _), ("expiresAt", _), ("tags", .replace), ("tags", .remove):
                return [step]
            case ("tags", .add):
                return try tagAdditions(step, listPath: step.path, in: document, valueField: valueField)
            default:
                throw notAllowed
            }
        case 2:
            if tokens[0] == "tags" { return try tagElementStep(step, listPath: step.path.parent, in: document, notAllowed: notAllowed) }
            if tokens[0] == "templates" { return try templateStep(step, in: document) }
            throw notAllowed
        case 3 where tokens[0] == "templates":
            switch tokens[2] {
            case "body", "headers", "expiry": return [step]
            case "tags":
                switch step.operation {
                case .add: return try tagAdditions(step, listPath: step.path, in: document, valueField: valueField)
                case .replace, .remove: return [step]
                }
            default: throw notAllowed
            }
        case 4 where tokens[0] == "templates" && tokens[2] == "tags":
            return try tagElementStep(step, listPath: step.path.parent, in: document, notAllowed: notAllowed)
        default:
            throw notAllowed
        }
    }

    /// `add /templates/{name}` on an installation without a `templates` object creates it.
    static func templateStep(_ step: JSONPatch.Step, in document: JSONValue) throws(JSONPatchError) -> [JSONPatch.Step] {
        guard step.operation == .add, !isObject(document["templates"]) else { return [step] }
        return [JSONPatch.Step(operation: .add, path: JSONPointer(tokens: ["templates"]), value: .object([])), step]
    }

    /// Azure's `add` on a tag list: a string or an array of strings, each appended unless present.
    static func tagAdditions(_ step: JSONPatch.Step, listPath: JSONPointer, in document: JSONValue, valueField: String)
        throws(JSONPatchError) -> [JSONPatch.Step]
    {
        let additions: [JSONValue]
        switch step.value {
        case .string?: additions = [step.value!]
        case .array(let elements)?: additions = elements
        default:
            throw JSONPatchError(
                code: JSONPatchError.Code.invalidPatch, message: "adding to a tag list takes a tag or an array of tags", field: valueField)
        }
        var steps: [JSONPatch.Step] = []
        var current = tagList(at: listPath, in: document)
        if current == nil {
            steps.append(JSONPatch.Step(operation: .add, path: listPath, value: .array([])))
            current = []
        }
        for tag in additions where !current!.contains(tag) {
            current!.append(tag)
            steps.append(JSONPatch.Step(operation: .add, path: listPath.appending("-"), value: tag))
        }
        return steps
    }

    /// `add …/tags/-` appends one tag unless present; `remove …/tags/{tag}` removes by value.
    static func tagElementStep(_ step: JSONPatch.Step, listPath: JSONPointer, in document: JSONValue, notAllowed: JSONPatchError)
        throws(JSONPatchError) -> [JSONPatch.Step]
    {
        let token = step.path.last!
        switch step.operation {
        case .add where token == "-":
            let current = tagList(at: listPath, in: document)
            if let current, current.contains(step.value!) { return [] }
            var steps: [JSONPatch.Step] = []
            if current == nil { steps.append(JSONPatch.Step(operation: .add, path: listPath, value: .array([]))) }
            steps.append(step)
            return steps
        case .remove:
            guard let current = tagList(at: listPath, in: document), let index = current.firstIndex(of: .string(token)) else { return [] }
            return [JSONPatch.Step(operation: .remove, path: listPath.appending(String(index)), value: nil)]
        default:
            throw notAllowed
        }
    }

    static func tagList(at path: JSONPointer, in document: JSONValue) -> [JSONValue]? {
        var value = document
        for token in path.tokens {
            guard let next = value[token] else { return nil }
            value = next
        }
        if case .array(let elements) = value { return elements }
        return nil
    }

    static func isObject(_ value: JSONValue?) -> Bool {
        if case .object? = value { return true }
        return false
    }
}

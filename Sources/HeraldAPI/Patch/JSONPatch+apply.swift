import HeraldDomain

extension JSONPatch {
    /// Applies every step in order (RFC 6902 section 4); the first failing step aborts the
    /// whole patch, so a patch is all or nothing.
    func apply(to document: JSONValue) throws(JSONPatchError) -> JSONValue {
        var document = document
        for (position, step) in steps.enumerated() {
            document = try Self.apply(step, to: document, field: "[\(position)].path")
        }
        return document
    }

    static func apply(_ step: Step, to document: JSONValue, field: String) throws(JSONPatchError) -> JSONValue {
        guard let last = step.path.last else {
            // The root: add and replace swap the whole document; removing it is meaningless.
            if step.operation == .remove {
                throw JSONPatchError(code: JSONPatchError.Code.invalidPatch, message: "the whole document cannot be removed", field: field)
            }
            return step.value!
        }
        return try modify(document, at: step.path.parent.tokens[...], field: field) { (container) throws(JSONPatchError) -> JSONValue in
            try change(container, member: last, step: step, field: field)
        }
    }

    /// Rebuilds `value` with the container at `tokens` replaced by `transform(container)`.
    static func modify(
        _ value: JSONValue, at tokens: ArraySlice<String>, field: String,
        _ transform: (JSONValue) throws(JSONPatchError) -> JSONValue
    ) throws(JSONPatchError) -> JSONValue {
        guard let token = tokens.first else { return try transform(value) }
        switch value {
        case .object(var members):
            guard let index = members.lastIndex(where: { $0.key == token }) else {
                throw JSONPatchError(code: JSONPatchError.Code.pathNotFound, message: "there is no member \"\(token)\"", field: field)
            }
            members[index].value = try modify(members[index].value, at: tokens.dropFirst(), field: field, transform)
            return .object(members)
        case .array(var elements):
            guard let index = arrayIndex(token), index < elements.count else {
                throw JSONPatchError(
                    code: JSONPatchError.Code.pathNotFound, message: "\"\(token)\" is not an index of an array of \(elements.count)",
                    field: field)
            }
            elements[index] = try modify(elements[index], at: tokens.dropFirst(), field: field, transform)
            return .array(elements)
        default:
            throw JSONPatchError(
                code: JSONPatchError.Code.pathNotFound, message: "cannot descend into \(value.kindDescription) at \"\(token)\"",
                field: field)
        }
    }

    /// Performs the step on the member `token` of `container`.
    static func change(_ container: JSONValue, member token: String, step: Step, field: String) throws(JSONPatchError) -> JSONValue {
        switch container {
        case .object(var members):
            let existing = members.lastIndex(where: { $0.key == token })
            switch step.operation {
            case .add:
                if let existing {
                    members[existing].value = step.value!
                } else {
                    members.append(JSONMember(key: token, value: step.value!))
                }
            case .replace:
                guard let existing else {
                    throw JSONPatchError(
                        code: JSONPatchError.Code.pathNotFound, message: "cannot replace \"\(token)\": it does not exist", field: field)
                }
                members[existing].value = step.value!
            case .remove:
                guard existing != nil else {
                    throw JSONPatchError(
                        code: JSONPatchError.Code.pathNotFound, message: "cannot remove \"\(token)\": it does not exist", field: field)
                }
                members.removeAll { $0.key == token }
            }
            return .object(members)
        case .array(var elements):
            if step.operation == .add && token == "-" {
                elements.append(step.value!)
                return .array(elements)
            }
            let bound = step.operation == .add ? elements.count : elements.count - 1
            guard let index = arrayIndex(token), index <= bound else {
                throw JSONPatchError(
                    code: JSONPatchError.Code.pathNotFound,
                    message: "\"\(token)\" is not a valid index for \(step.operation.rawValue) in an array of \(elements.count)",
                    field: field)
            }
            switch step.operation {
            case .add: elements.insert(step.value!, at: index)
            case .replace: elements[index] = step.value!
            case .remove: elements.remove(at: index)
            }
            return .array(elements)
        default:
            throw JSONPatchError(
                code: JSONPatchError.Code.pathNotFound, message: "\(container.kindDescription) has no member \"\(token)\"", field: field)
        }
    }

    /// RFC 6901 array indexes: `0` or digits without a leading zero.
    static func arrayIndex(_ token: String) -> Int? {
        guard !token.isEmpty, token.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
            token == "0" || !token.hasPrefix("0")
        else { return nil }
        return Int(token)
    }
}

import HeraldDomain

/// An RFC 6902 JSON Patch limited to the `add`, `remove` and `replace` operations, applied
/// to the domain's order-preserving ``JSONValue``. Pure: no I/O, no knowledge of what the
/// document means (``InstallationPatch`` adds that).
struct JSONPatch: Sendable, Hashable {
    enum Operation: String, Sendable, Hashable {
        case add, remove, replace
    }

    struct Step: Sendable, Hashable {
        var operation: Operation
        var path: JSONPointer
        /// Present for `add` and `replace`.
        var value: JSONValue?
    }

    var steps: [Step]

    /// Reads a patch document (a JSON array of operation objects).
    static func decode(_ document: JSONValue, maxOperations: Int) throws(JSONPatchError) -> JSONPatch {
        guard case .array(let elements) = document else {
            throw JSONPatchError(
                code: JSONPatchError.Code.invalidPatch,
                message: "a JSON Patch is an array of operations, found \(document.kindDescription)", field: "")
        }
        guard elements.count <= maxOperations else {
            throw JSONPatchError(
                code: JSONPatchError.Code.invalidPatch, message: "\(elements.count) operations; the limit is \(maxOperations)", field: "")
        }
        var steps: [Step] = []
        for (position, element) in elements.enumerated() {
            let field = "[\(position)]"
            guard case .object(let members) = element else {
                throw JSONPatchError(
                    code: JSONPatchError.Code.invalidPatch, message: "an operation is an object, found \(element.kindDescription)",
                    field: field)
            }
            guard case .string(let opText) = element["op"] else {
                throw JSONPatchError(code: JSONPatchError.Code.invalidPatch, message: "\"op\" must be a string", field: "\(field).op")
            }
            guard let operation = Operation(rawValue: opText) else {
                throw JSONPatchError(
                    code: JSONPatchError.Code.unsupportedOperation,
                    message: "operation \"\(opText)\" is not supported; use add, remove or replace", field: "\(field).op"
                )
            }
            guard case .string(let pathText) = element["path"] else {
                throw JSONPatchError(code: JSONPatchError.Code.invalidPatch, message: "\"path\" must be a string", field: "\(field).path")
            }
            guard let path = JSONPointer(pathText) else {
                throw JSONPatchError(
                    code: JSONPatchError.Code.invalidPatch, message: "\"\(pathText)\" is not a JSON Pointer (RFC 6901)",
                    field: "\(field).path")
            }
            let value = element["value"]
            if operation != .remove && value == nil {
                throw JSONPatchError(
                    code: JSONPatchError.Code.invalidPatch, message: "\(opText) needs a \"value\"", field: "\(field).value")
            }
            // RFC 6902 lets readers ignore other members; a patch that means more than it does
            // is refused instead ("from" belongs to move and copy, which are not supported).
            if let unknown = members.first(where: { !["op", "path", "value"].contains($0.key) }) {
                throw JSONPatchError(
                    code: JSONPatchError.Code.invalidPatch,
                    message: "unknown member \"\(unknown.key)\"; an operation has op, path and value", field: "\(field).\(unknown.key)")
            }
            steps.append(Step(operation: operation, path: path, value: operation == .remove ? nil : value))
        }
        return JSONPatch(steps: steps)
    }
}

/// Why a JSON Patch document was refused: a malformed operation, a path that does not
/// resolve, or a path the resource does not allow patching. `field` points into the patch
/// document, for example `[2].path`.
struct JSONPatchError: Error, Sendable, Hashable, CustomStringConvertible {
    enum Code {
        static let invalidPatch = "invalid_patch"
        static let unsupportedOperation = "unsupported_patch_operation"
        static let pathNotFound = "patch_path_not_found"
        static let pathNotAllowed = "patch_path_not_allowed"
    }

    var code: String
    var message: String
    var field: String

    var description: String { "\(field): \(code): \(message)" }
}

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

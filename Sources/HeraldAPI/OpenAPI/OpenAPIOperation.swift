import HTTPTypes

/// One route as the OpenAPI document describes it. The list in
/// `OpenAPIDocument+operations.swift` is the single description of the API surface; a
/// test checks it against the router's registered routes in both directions.
struct OpenAPIOperation: Sendable {
    var method: HTTPRequest.Method
    /// Path template in OpenAPI style, for example `/v1/registrations/{id}`.
    var path: String
    var operationId: String
    var summary: String
    var tag: String
    /// Who may call it, in words (rendered into the description).
    var access: String
    /// Query parameters by name with their description.
    var query: [(name: String, description: String)] = []
    /// Component schema of the request body, if any, and its media type.
    var requestSchema: String? = nil
    var requestMediaType: String = "application/json"
    /// Success status, its description and response schema (nil for no body).
    var success: (status: Int, description: String, schema: String?)
    /// Error statuses this operation documents besides 401/403.
    var errors: [Int] = []
    /// Whether the route needs an `Authorization` header.
    var authenticated: Bool = true
    /// Request headers it reads (`If-Match`).
    var headers: [String] = []
}

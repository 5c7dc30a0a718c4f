import HeraldDomain

/// The OpenAPI 3.1 document served at `/openapi.json`, built from ``operations`` and the
/// component schemas below.
enum OpenAPIDocument {
    static func json() -> JSONValue {
        var paths: [String: [JSONMember]] = [:]
        var order: [String] = []
        for operation in operations {
            if paths[operation.path] == nil { order.append(operation.path) }
            paths[operation.path, default: []].append(JSONMember(key: operation.method.rawValue.lowercased(), value: describe(operation)))
        }
        return object([
            ("openapi", .string("3.1.0")),
            (
                "info",
                object([
                    ("title", .string("Herald API")),
                    ("version", .string("1")),
                    (
                        "description",
                        .string(
                            "Registrations, installations and notifications for Herald, a Kafka + Redis fan-out engine for push notifications. Errors are {\"error\": {\"code\", \"message\", \"field\", \"issues\"}}."
                        )
                    ),
                ])
            ),
            ("paths", .object(order.map { JSONMember(key: $0, value: .object(paths[$0]!)) })),
            (
                "components",
                object([
                    (
                        "securitySchemes",
                        object([
                            (
                                "sharedAccessSignature",
                                object([
                                    ("type", .string("apiKey")), ("in", .string("header")), ("name", .string("Authorization")),
                                    (
                                        "description",
                                        .string(
                                            "SharedAccessSignature sr=<url-encoded resource>&sig=<base64 HMAC-SHA256 of \"<sr>\\n<se>\">&se=<expiry>&skn=<policy>"
                                        )
                                    ),
                                ])
                            ),
                            (
                                "userToken",
                                object([
                                    ("type", .string("http")), ("scheme", .string("bearer")),
                                    ("bearerFormat", .string("JWT (HS256, sub = user id)")),
                                ])
                            ),
                        ])
                    ),
                    ("schemas", schemas),
                ])
            ),
        ])
    }

    static func describe(_ operation: OpenAPIOperation) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("operationId", .string(operation.operationId)),
            ("summary", .string(operation.summary)),
            ("description", .string("Access: \(operation.access)")),
            ("tags", .array([.string(operation.tag)])),
        ]
        var parameters: [JSONValue] = []
        if operation.path.contains("{id}") {
            parameters.append(
                object([
                    ("name", .string("id")), ("in", .string("path")), ("required", .bool(true)),
                    ("schema", object([("type", .string("string"))])),
                ]))
        }
        for parameter in operation.query {
            parameters.append(
                object([
                    ("name", .string(parameter.name)), ("in", .string("query")), ("required", .bool(false)),
                    ("description", .string(parameter.description)),
                    ("schema", object([("type", .string(parameter.name == "limit" ? "integer" : "string"))])),
                ]))
        }
        for header in operation.headers {
            parameters.append(
                object([
                    ("name", .string(header)), ("in", .string("header")), ("required", .bool(false)),
                    ("description", .string("An ETag from an earlier response; the request fails with 412 if the stored version differs.")),
                    ("schema", object([("type", .string("string"))])),
                ]))
        }
        if !parameters.isEmpty { members.append(("parameters", .array(parameters))) }
        if let schema = operation.requestSchema {
            members.append(
                (
                    "requestBody",
                    object([
                        ("required", .bool(true)),
                        ("content", object([(operation.requestMediaType, object([("schema", reference(schema))]))])),
                    ])
                ))
        }
        var responses: [(String, JSONValue)] = []
        var success: [(String, JSONValue)] = [("description", .string(operation.success.description))]
        if let schema = operation.success.schema {
            success.append(("content", object([("application/json", object([("schema", reference(schema))]))])))
        }
        responses.append((String(operation.success.status), object(success)))
        let errorStatuses = (operation.authenticated ? [400, 401, 403] : []) + operation.errors
        for status in Set(errorStatuses).sorted() {
            responses.append(
                (
                    String(status),
                    object([
                        ("description", .string(errorDescriptions[status] ?? "Error")),
                        ("content", object([("application/json", object([("schema", reference("Error"))]))])),
                    ])
                ))
        }
        members.append(("responses", object(responses)))
        if operation.authenticated {
            members.append(
                (
                    "security",
                    .array([
                        object([("sharedAccessSignature", .array([]))]),
                        object([("userToken", .array([]))]),
                    ])
                ))
        }
        return object(members)
    }

    static let errorDescriptions: [Int: String] = [
        400: "Invalid request: malformed JSON (with position), wrong types, invalid tags, templates or parameters; every issue is listed",
        401: "Missing, forged, expired or out-of-scope token (WWW-Authenticate names the schemes)",
        403: "The token lacks the right, or the request touches reserved tags or another user's device",
        404: "Not found",
        410: "Gone: the registration id was deleted or never issued",
        412: "If-Match names a version other than the stored one",
        413: "Request body larger than the limit",
        503: "A dependency is unavailable; retry",
    ]

    static func object(_ members: [(String, JSONValue)]) -> JSONValue {
        .object(members.map { JSONMember(key: $0.0, value: $0.1) })
    }

    static func reference(_ schema: String) -> JSONValue {
        object([("$ref", .string("#/components/schemas/\(schema)"))])
    }
}

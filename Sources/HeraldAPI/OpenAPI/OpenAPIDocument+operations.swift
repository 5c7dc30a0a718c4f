import HeraldDomain

extension OpenAPIDocument {
    static let deviceAccess = "Listen or Manage policy, or a user token (own registrations only; $UserId:{sub} is added)"
    static let pageQuery: [(name: String, description: String)] = [
        ("limit", "Page size, 1 to the configured maximum (default 100)"),
        ("cursor", "nextCursor of the previous page"),
    ]

    static let operations: [OpenAPIOperation] = [
        OpenAPIOperation(
            method: .post, path: "/v1/registrationIDs", operationId: "createRegistrationId",
            summary: "Issue a new registration id", tag: "registrations", access: deviceAccess,
            success: (201, "The new id; Location is /v1/registrations/{id}", "RegistrationId")
        ),
        OpenAPIOperation(
            method: .get, path: "/v1/registrations", operationId: "listRegistrations",
            summary: "List registrations by tag and/or handle", tag: "registrations",
            access: "Manage; Listen only by handle; a user token only its own",
            query: [("tag", "Only registrations carrying this tag"), ("handle", "Only registrations with this device handle")] + pageQuery,
            success: (200, "A page of registrations", "RegistrationPage")
        ),
        OpenAPIOperation(
            method: .put, path: "/v1/registrations/{id}", operationId: "putRegistration",
            summary: "Create or replace a registration", tag: "registrations", access: deviceAccess,
            requestSchema: "Registration", success: (200, "The stored registration; ETag is its version", "Registration"),
            errors: [410, 412, 413, 503], headers: ["If-Match"]
        ),
        OpenAPIOperation(
            method: .get, path: "/v1/registrations/{id}", operationId: "getRegistration",
            summary: "Read a registration", tag: "registrations", access: deviceAccess,
            success: (200, "The registration; ETag is its version", "Registration"), errors: [404, 410]
        ),
        OpenAPIOperation(
            method: .delete, path: "/v1/registrations/{id}", operationId: "deleteRegistration",
            summary: "Delete a registration", tag: "registrations", access: deviceAccess,
            success: (204, "Deleted", nil), errors: [404, 410, 412], headers: ["If-Match"]
        ),
        OpenAPIOperation(
            method: .get, path: "/v1/installations", operationId: "listInstallations",
            summary: "List installations by tag and/or user", tag: "installations",
            access: "Manage; a user token only its own",
            query: [("tag", "Only installations whose registrations carry this tag"), ("userId", "Only installations of this user")]
                + pageQuery,
            success: (200, "A page of installations", "InstallationPage")
        ),
        OpenAPIOperation(
            method: .put, path: "/v1/installations/{id}", operationId: "putInstallation",
            summary: "Create or replace an installation", tag: "installations", access: deviceAccess,
            requestSchema: "Installation", success: (200, "The stored installation; ETag is its version", "Installation"),
            errors: [412, 413, 503], headers: ["If-Match"]
        ),
        OpenAPIOperation(
            method: .get, path: "/v1/installations/{id}", operationId: "getInstallation",
            summary: "Read an installation", tag: "installations", access: deviceAccess,
            success: (200, "The installation; ETag is its version", "Installation"), errors: [404, 410]
        ),
        OpenAPIOperation(
            method: .patch, path: "/v1/installations/{id}", operationId: "patchInstallation",
            summary:
                "Change an installation with a JSON Patch (RFC 6902: add, remove, replace on /pushChannel, /userId, /expiresAt, /tags, /templates/{name}...)",
            tag: "installations", access: deviceAccess,
            requestSchema: "JSONPatch", requestMediaType: "application/json-patch+json",
            success: (200, "The patched installation; ETag is its version", "Installation"),
            errors: [404, 410, 412, 413], headers: ["If-Match"]
        ),
        OpenAPIOperation(
            method: .delete, path: "/v1/installations/{id}", operationId: "deleteInstallation",
            summary: "Delete an installation", tag: "installations", access: deviceAccess,
            success: (204, "Deleted", nil), errors: [404, 410, 412], headers: ["If-Match"]
        ),
        OpenAPIOperation(
            method: .post, path: "/v1/notifications", operationId: "publishNotification",
            summary: "Publish a notification event", tag: "notifications", access: "Send or Manage",
            requestSchema: "NotificationEvent", success: (202, "Accepted; Location is /v1/notifications/{id}", "NotificationAccepted"),
            errors: [413, 503]
        ),
        OpenAPIOperation(
            method: .get, path: "/v1/notifications/{id}", operationId: "getNotificationStatus",
            summary: "Read the status of a published event", tag: "notifications", access: "Send or Manage",
            success: (200, "The latest status record", "StatusRecord"), errors: [404]
        ),
        OpenAPIOperation(
            method: .get, path: "/health/live", operationId: "live", summary: "Liveness", tag: "operations",
            access: "anyone", success: (200, "The process is running", nil), authenticated: false
        ),
        OpenAPIOperation(
            method: .get, path: "/health/ready", operationId: "ready", summary: "Readiness (Kafka and Redis answer)",
            tag: "operations", access: "anyone", success: (200, "Ready", nil), errors: [503], authenticated: false
        ),
        OpenAPIOperation(
            method: .get, path: "/metrics", operationId: "metrics", summary: "Prometheus metrics (text exposition format)",
            tag: "operations", access: "anyone", success: (200, "Metrics", nil), authenticated: false
        ),
        OpenAPIOperation(
            method: .get, path: "/openapi.json", operationId: "openapi", summary: "This document",
            tag: "operations", access: "anyone", success: (200, "OpenAPI 3.1 document", nil), authenticated: false
        ),
    ]

    static var schemas: JSONValue {
        let string = object([("type", .string("string"))])
        let strings = object([("type", .string("array")), ("items", string)])
        let stringMap = object([("type", .string("object")), ("additionalProperties", string)])
        let nullableString = object([("type", .array([.string("string"), .string("null")]))])
        let timestamp = object([("type", .array([.string("string"), .string("null")])), ("format", .string("date-time"))])
        let platform = object([("type", .string("string")), ("enum", .array(Platform.allCases.map { .string($0.rawValue) }))])
        let version = object([("type", .string("integer")), ("readOnly", .bool(true))])
        func schema(_ properties: [(String, JSONValue)], required: [String]) -> JSONValue {
            object([
                ("type", .string("object")),
                ("properties", object(properties)),
                ("required", .array(required.map(JSONValue.string))),
            ])
        }
        func page(_ item: String) -> JSONValue {
            schema(
                [("items", object([("type", .string("array")), ("items", reference(item))])), ("nextCursor", nullableString)],
                required: ["items", "nextCursor"])
        }
        return object([
            (
                "Error",
                schema(
                    [
                        (
                            "error",
                            schema(
                                [
                                    ("code", string), ("message", string), ("field", string),
                                    (
                                        "issues",
                                        object([
                                            ("type", .string("array")),
                                            (
                                                "items",
                                                schema(
                                                    [("field", string), ("code", string), ("message", string)],
                                                    required: ["field", "code", "message"])
                                            ),
                                        ])
                                    ),
                                ], required: ["code", "message"])
                        )
                    ], required: ["error"])
            ),
            ("RegistrationId", schema([("registrationId", string), ("location", string)], required: ["registrationId"])),
            (
                "Template",
                schema([("name", string), ("body", string), ("headers", stringMap), ("expiry", nullableString)], required: ["body"])
            ),
            (
                "Registration",
                schema(
                    [
                        ("registrationId", string), ("platform", platform), ("handle", string), ("tags", strings),
                        ("template", object([("oneOf", .array([reference("Template"), object([("type", .string("null"))])]))])),
                        ("expiresAt", timestamp), ("version", version),
                    ], required: ["platform", "handle"])
            ),
            ("RegistrationPage", page("Registration")),
            (
                "InstallationTemplate",
                schema([("body", string), ("headers", stringMap), ("expiry", nullableString), ("tags", strings)], required: ["body"])
            ),
            (
                "Installation",
                schema(
                    [
                        ("installationId", string), ("platform", platform), ("pushChannel", string), ("tags", strings),
                        ("userId", nullableString),
                        ("templates", object([("type", .string("object")), ("additionalProperties", reference("InstallationTemplate"))])),
                        ("expiresAt", timestamp), ("version", version),
                    ], required: ["platform", "pushChannel"])
            ),
            ("InstallationPage", page("Installation")),
            (
                "JSONPatch",
                object([
                    ("type", .string("array")),
                    (
                        "items",
                        schema(
                            [
                                (
                                    "op",
                                    object([
                                        ("type", .string("string")),
                                        ("enum", .array([.string("add"), .string("remove"), .string("replace")])),
                                    ])
                                ),
                                ("path", string),
                                ("value", object([("description", .string("any JSON value; required for add and replace"))])),
                            ], required: ["op", "path"])
                    ),
                ])
            ),
            (
                "NotificationEvent",
                schema(
                    [
                        ("id", string),
                        ("tags", object([("oneOf", .array([string, strings]))])),
                        (
                            "properties",
                            object([
                                ("type", .string("object")),
                                (
                                    "additionalProperties",
                                    object([("type", .array([.string("string"), .string("number"), .string("boolean")]))])
                                ),
                            ])
                        ),
                        (
                            "native",
                            object([
                                ("type", .string("object")),
                                (
                                    "description",
                                    .string("Payload per platform (apns, fcm, wns, webpush) for registrations without a template")
                                ),
                            ])
                        ),
                        ("templates", strings),
                        ("expiresAt", timestamp),
                        ("priority", object([("type", .string("string")), ("enum", .array([.string("high"), .string("normal")]))])),
                        ("collapseId", string),
                    ], required: [])
            ),
            ("NotificationAccepted", schema([("id", string), ("location", string)], required: ["id"])),
            (
                "StatusRecord",
                object([
                    ("type", .string("object")),
                    (
                        "description",
                        .string(
                            "The latest herald.status record: state (accepted, processing, completed, expired, rejected), tasks, targets by platform and template, skipped, failed, timings"
                        )
                    ),
                ])
            ),
        ])
    }
}

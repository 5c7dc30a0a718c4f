/// What a route does, in the terms access rules are written in.
enum APIAction: Sendable, CustomStringConvertible {
    /// Create, read, update or delete one registration or installation.
    case manageOwnDevice
    /// List registrations or installations by a query.
    case listDevices
    /// `POST /v1/notifications`.
    case publish
    /// `GET /v1/notifications/{id}`.
    case readNotificationStatus

    var description: String {
        switch self {
        case .manageOwnDevice: "register a device"
        case .listDevices: "list registrations"
        case .publish: "send notifications"
        case .readNotificationStatus: "read notification status"
        }
    }
}

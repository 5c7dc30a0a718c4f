/// The outcome of reserving a version for a write (`reserve` script).
public enum VersionReservation: Sendable, Hashable {
    /// Write with this version.
    case reserved(Int64)
    /// `If-Match` named another version than the current one (412).
    case preconditionFailed(current: Int64)
    /// Another conditional write reserved a newer version that is still on its way (409).
    case conflict(inFlight: Int64)
    /// The id was deleted (410).
    case gone
}

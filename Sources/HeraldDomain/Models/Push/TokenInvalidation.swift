import Foundation

/// Whether an "unregistered" answer may remove the registration it was sent for.
///
/// A token dies when the app is uninstalled, but the same registration may have been
/// updated since the push left (the app reinstalled and registered a new token, or the same
/// one again): removing it then would silence a live device. So the registration is
/// removed only when it still holds the handle that was pushed to and has not changed since
/// the token was known to be invalid: APNs's 410 `timestamp` when it gives one, otherwise
/// the moment the request was sent.
public enum TokenInvalidation {
    /// - Parameters:
    ///   - current: the registration as the system of record holds it now (nil: already gone).
    ///     Its `version` is the microseconds since the epoch of its last write.
    ///   - pushedHandle: the handle the delivery was sent to.
    ///   - invalidSince: the 410 `timestamp`, or when the request was sent.
    public static func mayRemove(current: Registration?, pushedHandle: String, invalidSince: Date) -> Bool {
        guard let current, current.handle == pushedHandle else { return false }
        let sinceMicros = Int64((invalidSince.timeIntervalSince1970 * 1_000_000).rounded(.down))
        return current.version <= sinceMicros
    }
}

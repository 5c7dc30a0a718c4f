import Foundation

extension Platform {
    /// Bounds used by ``handleProblem(_:)``, in bytes of UTF-8.
    public enum HandleBounds {
        /// APNs tokens are 32 bytes today (64 hex digits); Apple warns they may grow, so
        /// longer even-length tokens are accepted up to 100 bytes.
        public static let apnsHexDigits = 64...200
        /// FCM registration tokens are about 150–165 characters in practice (an instance id,
        /// a colon, then an `APA91b…` part); Google documents no fixed length, so the
        /// bounds are generous but keep garbage and pasted payloads out.
        public static let fcmLength = 32...1024
        /// WNS channel URIs are URL-encoded and usually under 300 characters.
        public static let wnsLength = 1...2048
        /// Web push endpoints embed a long subscription id on some services.
        public static let webPushLength = 1...4096
    }

    /// Why `handle` cannot address a device on this platform, or `nil` when it can.
    /// Checks shape only (alphabet, length, URL scheme and host); whether the device still
    /// exists is the push service's answer.
    public func handleProblem(_ handle: String) -> String? {
        switch self {
        case .apns: Self.apnsProblem(handle)
        case .fcm: Self.fcmProblem(handle)
        case .wns: Self.wnsProblem(handle)
        case .webpush: Self.webPushProblem(handle)
        }
    }

    /// ``handleProblem(_:)`` as a validation issue at `field`.
    public func handleIssue(_ handle: String, field: String) -> ValidationIssue? {
        handleProblem(handle).map { ValidationIssue(field: field, code: ValidationIssue.Code.invalidHandle, message: $0) }
    }

    static func apnsProblem(_ token: String) -> String? {
        let bytes = Array(token.utf8)
        if let position = bytes.firstIndex(where: { !isHexDigit($0) }) {
            return "an APNs device token is hexadecimal (0-9, a-f); found \(describe(token, at: position)) at position \(position + 1)"
        }
        guard HandleBounds.apnsHexDigits.contains(bytes.count) else {
            return
                "an APNs device token has \(HandleBounds.apnsHexDigits.lowerBound) to \(HandleBounds.apnsHexDigits.upperBound) hex digits (64 today); this one has \(bytes.count)"
        }
        guard bytes.count.isMultiple(of: 2) else {
            return "an APNs device token has an even number of hex digits (two per byte); this one has \(bytes.count)"
        }
        return nil
    }

    static func fcmProblem(_ token: String) -> String? {
        let bytes = Array(token.utf8)
        guard HandleBounds.fcmLength.contains(bytes.count) else {
            return
                "an FCM registration token has \(HandleBounds.fcmLength.lowerBound) to \(HandleBounds.fcmLength.upperBound) characters (about 160 usually); this one has \(bytes.count)"
        }
        if let position = bytes.firstIndex(where: { !isFCMTokenByte($0) }) {
            return
                "an FCM registration token uses letters, digits, '-', '_', ':' and '.'; found \(describe(token, at: position)) at position \(position + 1)"
        }
        return nil
    }

    static func wnsProblem(_ uri: String) -> String? {
        guard HandleBounds.wnsLength.contains(uri.utf8.count) else {
            return "a WNS channel URI is at most \(HandleBounds.wnsLength.upperBound) characters; this one has \(uri.utf8.count)"
        }
        guard let components = URLComponents(string: uri), let host = components.host?.lowercased(), !host.isEmpty else {
            return "a WNS channel URI must be an absolute https URL such as https://db5.notify.windows.com/?token=..."
        }
        guard components.scheme?.lowercased() == "https" else {
            return "a WNS channel URI must use https, not \(components.scheme.map { "\"\($0)\"" } ?? "no scheme")"
        }
        guard host == "notify.windows.com" || host.hasSuffix(".notify.windows.com") else {
            return "a WNS channel URI's host ends in notify.windows.com; \"\(host)\" does not"
        }
        return nil
    }

    static func webPushProblem(_ handle: String) -> String? {
        guard HandleBounds.webPushLength.contains(handle.utf8.count) else {
            return "a web push handle is at most \(HandleBounds.webPushLength.upperBound) characters; this one has \(handle.utf8.count)"
        }
        if case .failure(let problem) = WebPushSubscription.parse(handle: handle) { return problem.description }
        return nil
    }

    static func isHexDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
            || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
    }

    static func isFCMTokenByte(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
            || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ":") || byte == UInt8(ascii: ".")
    }

    /// The character at UTF-8 offset `position`, quoted, for messages.
    static func describe(_ text: String, at position: Int) -> String {
        let byte = Array(text.utf8)[position]
        if byte >= 0x21 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        if byte == 0x20 { return "a space" }
        return "byte 0x\(String(byte, radix: 16, uppercase: true))"
    }
}

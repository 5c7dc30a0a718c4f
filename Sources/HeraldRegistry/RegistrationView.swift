/// The fan-out's view of one registration, stored at `herald:{s}:reg:<id>` as one line:
/// `1|<platform>|<expiresAt epoch s or empty>|<template name>|<template key>|<handle>`.
///
/// It holds only what a delivery needs, in a form that parses without a JSON decoder, because
/// the fan-out reads it once per device per event.
public struct RegistrationView: Sendable, Hashable {
    public var platform: String
    public var expiresAtEpochSeconds: Int64?
    /// Empty for a native registration (no template).
    public var templateName: String
    /// Content key of the template under `herald:tpl:<key>`; empty for a native registration.
    public var templateKey: String
    public var handle: String

    public init(platform: String, expiresAtEpochSeconds: Int64?, templateName: String, templateKey: String, handle: String) {
        self.platform = platform
        self.expiresAtEpochSeconds = expiresAtEpochSeconds
        self.templateName = templateName
        self.templateKey = templateKey
        self.handle = handle
    }

    public var isNative: Bool { templateKey.isEmpty }

    public var encoded: String {
        let expiry = expiresAtEpochSeconds.map(String.init) ?? ""
        return "1|\(platform)|\(expiry)|\(templateName)|\(templateKey)|\(handle)"
    }

    /// Parses the stored line; nil when it is not a layout-1 view.
    public init?<Bytes: Collection>(bytes: Bytes) where Bytes.Element == UInt8 {
        var parts: [String] = []
        parts.reserveCapacity(6)
        var current: [UInt8] = []
        current.reserveCapacity(64)
        for byte in bytes {
            if byte == UInt8(ascii: "|") && parts.count < 5 {
                parts.append(String(decoding: current, as: UTF8.self))
                current.removeAll(keepingCapacity: true)
            } else {
                current.append(byte)
            }
        }
        parts.append(String(decoding: current, as: UTF8.self))
        guard parts.count == 6, parts[0] == "1" else { return nil }
        platform = parts[1]
        if parts[2].isEmpty {
            expiresAtEpochSeconds = nil
        } else if let value = Int64(parts[2]) {
            expiresAtEpochSeconds = value
        } else {
            return nil
        }
        templateName = parts[3]
        templateKey = parts[4]
        handle = parts[5]
    }
}

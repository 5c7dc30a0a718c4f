import Foundation

/// The fan-out's view of one registration, stored in its slot's view pack (`ViewPack`) as one
/// line: `2|<platform>|<expiresAt epoch s or empty>|<template name>|<template key>|<tags>|<handle>`,
/// the tags joined by `,` (no tag contains `,` or `|`, `TagRules`).
///
/// It holds only what a delivery needs, in a form that parses without a JSON decoder, because
/// the fan-out reads it once per device per event. The tags are every tag the index files the
/// registration under (its own and the system tags), so a scan of a slot's packs can test a tag
/// expression against each registration without asking Redis for set memberships. The indexer writes it (`encoded`); the
/// fan-out reads it in place with `ViewFields`, which this type's own parser uses too.
public struct RegistrationView: Sendable, Hashable {
    public var platform: String
    public var expiresAtEpochSeconds: Int64?
    /// Empty for a native registration (no template).
    public var templateName: String
    /// Content key of the template under `herald:tpl:<key>`; empty for a native registration;
    /// `$liveActivity` or `$pushToStart` for those APNs tokens (no template: the event says what).
    public var templateKey: String
    /// Every tag the index files the registration under.
    public var tags: [String]
    public var handle: String

    public init(
        platform: String, expiresAtEpochSeconds: Int64?, templateName: String, templateKey: String, tags: [String] = [],
        handle: String
    ) {
        self.platform = platform
        self.expiresAtEpochSeconds = expiresAtEpochSeconds
        self.templateName = templateName
        self.templateKey = templateKey
        self.tags = tags
        self.handle = handle
    }

    public var isNative: Bool { templateKey.isEmpty }

    public var encoded: String {
        let expiry = expiresAtEpochSeconds.map(String.init) ?? ""
        return "2|\(platform)|\(expiry)|\(templateName)|\(templateKey)|\(tags.joined(separator: ","))|\(handle)"
    }

    /// Parses the stored line; nil when it is not a view of this layout.
    public init?<Bytes: Collection>(bytes: Bytes) where Bytes.Element == UInt8 {
        let line = Array(bytes)
        guard let fields = ViewFields(line) else { return nil }
        let expiry = fields.expiresAt(in: line)
        guard expiry != nil || fields.expiry.isEmpty else { return nil }
        func text(_ range: Range<Int>) -> String { String(decoding: line[range], as: UTF8.self) }
        self.init(
            platform: text(fields.platform), expiresAtEpochSeconds: expiry, templateName: text(fields.templateName),
            templateKey: text(fields.templateKey),
            tags: fields.tags.isEmpty ? [] : text(fields.tags).split(separator: ",").map(String.init), handle: text(fields.handle))
    }
}

/// Field ranges inside a fan-out view line
/// (`2|<platform>|<expiresAt>|<template name>|<template key>|<tags>|<handle>`), found without
/// allocating: the hot path reads one view per device.
public struct ViewFields: Sendable, Hashable {
    public var platform: Range<Int>
    public var expiry: Range<Int>
    public var templateName: Range<Int>
    public var templateKey: Range<Int>
    public var tags: Range<Int>
    public var handle: Range<Int>

    public init?(_ view: [UInt8]) {
        guard let fields = view.withUnsafeBytes({ ViewFields($0) }) else { return nil }
        self = fields
    }

    public init?(_ view: UnsafeRawBufferPointer) {
        // "2|" then five more separators, found with memchr: the hot path parses one view
        // per device, and the handle (the longest field, which may itself contain '|') is last.
        guard view.count >= 2, view[0] == UInt8(ascii: "2"), view[1] == UInt8(ascii: "|"), let base = view.baseAddress else {
            return nil
        }
        let count = view.count
        func separator(after start: Int) -> Int? {
            guard start < count, let found = memchr(base + start, Int32(UInt8(ascii: "|")), count - start) else { return nil }
            return base.distance(to: UnsafeRawPointer(found))
        }
        guard let second = separator(after: 2), let third = separator(after: second + 1),
            let fourth = separator(after: third + 1), let fifth = separator(after: fourth + 1),
            let sixth = separator(after: fifth + 1)
        else { return nil }
        platform = 2..<second
        expiry = (second + 1)..<third
        templateName = (third + 1)..<fourth
        templateKey = (fourth + 1)..<fifth
        tags = (fifth + 1)..<sixth
        handle = (sixth + 1)..<count
    }

    public func expiresAt(in view: [UInt8]) -> Int64? {
        view.withUnsafeBytes { expiresAt(in: $0) }
    }

    public func expiresAt(in view: UnsafeRawBufferPointer) -> Int64? {
        guard !expiry.isEmpty else { return nil }
        var value: Int64 = 0
        for index in expiry {
            let digit = view[index] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            value = value &* 10 &+ Int64(digit)
        }
        return value
    }
}

import Foundation
import HeraldDomain

/// A registration as the index stores it, derived only from the record's bytes so the API's
/// write-through, the indexer and a reindex produce byte-identical Redis state.
public struct IndexedRegistration: Sendable, Hashable {
    /// The hub the document names (the default hub when it names none).
    public var hub: HubName
    public var id: String
    public var version: Int64
    /// The record value, stored as is at `herald:{s}:doc:<id>`.
    public var document: [UInt8]
    public var tags: [String]
    public var handle: String
    public var view: RegistrationView
    /// The canonical template JSON stored at `herald:tpl:<view.templateKey>`; nil for native.
    public var templateJSON: [UInt8]?

    /// Parses a `herald.registrations` value (the contract shape). Only the fields the index
    /// needs are read; the document was validated when it was written.
    public init(document: [UInt8]) throws(RegistryRecordError) {
        let root: JSONValue
        do {
            root = try JSONValue.parse(document)
        } catch {
            throw RegistryRecordError(message: "registration value is not JSON: \(error.description)")
        }
        guard case .string(let id)? = root["registrationId"] else {
            throw RegistryRecordError(message: "registration value has no string registrationId")
        }
        var hub = HubName.default
        if let named = root["hub"] {
            guard case .string(let text) = named, let name = HubName(text) else {
                throw RegistryRecordError(message: "registration \(id) names no valid hub: \(named)")
            }
            hub = name
        }
        guard case .string(let platform)? = root["platform"], case .string(let handle)? = root["handle"] else {
            throw RegistryRecordError(message: "registration \(id) has no platform or handle")
        }
        var tags: [String] = []
        if case .array(let elements)? = root["tags"] {
            for element in elements {
                guard case .string(let tag) = element else {
                    throw RegistryRecordError(message: "registration \(id) has a tag that is not a string")
                }
                tags.append(tag)
            }
        }
        // The zone's system tags are the index's, derived from `timeZone` (the `apply` script
        // derives the old ones from the stored document the same way).
        if case .string(let zone)? = root["timeZone"] { tags += TagRules.timeZoneTags(zone) }
        if case .string(let quiet)? = root["quietHours"] { tags += QuietHours.tags(quiet) }
        if case .number(let cap)? = root["frequencyCap"], let maxAlerts = Int(cap) {
            tags += [FrequencyCap.tag(maxAlerts), FrequencyCap.anyTag]
        }
        var version: Int64 = 0
        if case .number(let text)? = root["version"] {
            guard let parsed = Int64(text) else {
                throw RegistryRecordError(message: "registration \(id) has version \(text), not an integer")
            }
            version = parsed
        }
        var expiresAt: Int64?
        if case .string(let text)? = root["expiresAt"] {
            guard let date = ISO8601Timestamp.parse(text) else {
                throw RegistryRecordError(message: "registration \(id) has expiresAt \"\(text)\", not an ISO-8601 instant")
            }
            expiresAt = Self.epochSeconds(date)
        }
        var templateName = ""
        var templateKey = ""
        var templateJSON: [UInt8]?
        if case .string(let kind)? = root["tokenKind"], let name = APNsTokenKind(rawValue: kind)?.deliveryTemplateName {
            // A Live Activity or push-to-start token: no template; the fan-out builds its push
            // from the event (`TaskRun`), and knows it by this name in the key's place.
            templateName = name
            templateKey = name
        } else if let template = root["template"], template != .null {
            guard case .string(let name)? = template["name"] else {
                throw RegistryRecordError(message: "registration \(id) has a template without a name")
            }
            var canonical: [UInt8] = []
            template.write(into: &canonical, sortingKeys: true)
            templateName = name
            templateKey = TemplateContentKey.of(canonical)
            templateJSON = canonical
        }
        self.hub = hub
        self.id = id
        self.version = version
        self.document = document
        self.tags = Self.uniqued(tags)
        self.handle = handle
        self.view = RegistrationView(
            platform: platform, expiresAtEpochSeconds: expiresAt,
            templateName: templateName, templateKey: templateKey, tags: self.tags, handle: handle
        )
        self.templateJSON = templateJSON
    }

    /// The index form of a registration held in memory (the API's write-through).
    public init(_ registration: Registration) {
        do {
            try self.init(document: registration.jsonBytes())
        } catch {
            preconditionFailure("a Registration always encodes to a readable document: \(error)")
        }
    }

    /// Expiry in whole seconds, rounded up so a registration never stops matching early.
    static func epochSeconds(_ date: Date) -> Int64 {
        Int64(date.timeIntervalSince1970.rounded(.up))
    }

    private static func uniqued(_ tags: [String]) -> [String] {
        var seen = Set<String>()
        return tags.filter { seen.insert($0).inserted }
    }
}

/// A `herald.registrations` record that cannot be applied (the indexer counts and skips it).
public struct RegistryRecordError: Error, Sendable, Hashable, CustomStringConvertible {
    public var code: String { "invalid_registry_record" }
    public var message: String

    public init(message: String) { self.message = message }

    public var description: String { "\(code): \(message)" }
}

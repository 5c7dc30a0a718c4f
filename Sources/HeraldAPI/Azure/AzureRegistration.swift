import Foundation
import HeraldDomain

/// Azure Notification Hubs' registrations as Atom XML entries (`AppleRegistrationDescription`,
/// `FcmV1TemplateRegistrationDescription`, …) and Herald's registration document.
///
/// Requests are read in any element order, with `i:nil` members taken as absent and the
/// read-only members (`ETag`, `ExpirationTime`, `RegistrationId`) ignored, as Azure's SDKs
/// send them; what Herald does not take (other platforms, `PushVariables`, unknown elements)
/// is refused naming the element. Answers are compact, with the members in the order of
/// Azure's data contracts, which the .NET SDK's reader requires.
enum AzureRegistration {
    static let atomNamespace = "http://www.w3.org/2005/Atom"
    static let metadataNamespace = "http://schemas.microsoft.com/ado/2007/08/dataservices/metadata"
    static let instanceNamespace = "http://www.w3.org/2001/XMLSchema-instance"
    static let entryContentType = "application/atom+xml; type=entry; charset=utf-8"
    static let feedContentType = "application/atom+xml; type=feed; charset=utf-8"
    /// What Azure answers for a registration that never expires.
    static let neverExpires = "9999-12-31T23:59:59.999Z"

    /// A description's platform part: `Apple` in `AppleTemplateRegistrationDescription`.
    struct Kind: Sendable {
        let name: String
        let platform: Platform
        /// The element holding the device's handle (a browser's is `Endpoint`, `P256DH`, `Auth`).
        let handle: String
        /// The element of this kind's header templates, if it has them.
        let headers: String?

        var headerItem: String? { headers.map { String($0.dropLast()) } }
    }

    static let kinds: [String: Kind] = [
        "Apple": Kind(name: "Apple", platform: .apns, handle: "DeviceToken", headers: "ApnsHeaders"),
        "FcmV1": Kind(name: "FcmV1", platform: .fcm, handle: "FcmV1RegistrationId", headers: nil),
        "Gcm": Kind(name: "Gcm", platform: .fcm, handle: "GcmRegistrationId", headers: nil),
        "Fcm": Kind(name: "Fcm", platform: .fcm, handle: "FcmRegistrationId", headers: nil),
        "Windows": Kind(name: "Windows", platform: .wns, handle: "ChannelUri", headers: "WnsHeaders"),
        "Browser": Kind(name: "Browser", platform: .webpush, handle: "Endpoint", headers: nil),
    ]

    /// The kind Herald answers for each platform.
    static func kind(of platform: Platform) -> Kind {
        switch platform {
        case .apns: kinds["Apple"]!
        case .fcm: kinds["FcmV1"]!
        case .wns: kinds["Windows"]!
        case .webpush: kinds["Browser"]!
        }
    }

    /// The name Herald gives a template registration that names none.
    static let defaultTemplateName = "template"

    // MARK: Reading

    /// A request's entry: the kind, whether it is a template, and Herald's registration document.
    struct Request {
        var kind: Kind
        var isTemplate: Bool
        var document: [UInt8]
    }

    /// Reads an Atom entry into Herald's registration document (without id or hub).
    static func read(_ bytes: [UInt8]) throws -> Request {
        let root: XMLTree
        do {
            root = try XMLTree.read(bytes)
        } catch {
            throw APIError.invalidBody(field: "entry", "the body is not well-formed XML: \(error)")
        }
        guard root.localName == "entry" else {
            throw APIError.invalidBody(field: "entry", "expected an Atom <entry> holding a registration description; got <\(root.name)>")
        }
        guard let content = root.child("content") else {
            throw APIError.invalidBody(field: "content", "the <entry> has no <content> holding a registration description")
        }
        guard content.children.count == 1, let description = content.children.first else {
            throw APIError.invalidBody(
                field: "content", "<content> holds one registration description; found \(content.children.count) elements")
        }
        var typeName = String(description.localName)
        // A description written as its base type names its own type in `i:type`.
        if typeName == "RegistrationDescription", let type = attribute("type", of: description) {
            typeName = String(type.split(separator: ":").last ?? Substring(type))
        }
        guard typeName.hasSuffix("RegistrationDescription") else {
            throw APIError.invalidBody(field: typeName, "<\(typeName)> is not a registration description")
        }
        var base = String(typeName.dropLast("RegistrationDescription".count))
        let isTemplate = base.hasSuffix("Template")
        if isTemplate { base.removeLast("Template".count) }
        guard let kind = kinds[base] else {
            throw APIError.invalidBody(
                field: typeName,
                "Herald does not send to \(base.isEmpty ? "this platform" : base) devices; use Apple, FcmV1 (or Gcm), Windows or Browser registrations"
            )
        }
        return Request(kind: kind, isTemplate: isTemplate, document: try document(description, kind: kind, isTemplate: isTemplate))
    }

    private static func document(_ description: XMLTree, kind: Kind, isTemplate: Bool) throws -> [UInt8] {
        var members: [JSONMember] = [JSONMember(key: "platform", value: .string(kind.platform.rawValue))]
        var handle: String?
        var keys: (p256dh: String?, auth: String?) = (nil, nil)
        var tags: [String] = []
        var body: String?
        var name: String?
        var expiry: String?
        var headers: [JSONMember] = []
        let element = description.localName
        var seen: Set<Substring> = []
        for child in description.children where !isNil(child) {
            let field = child.localName
            guard seen.insert(field).inserted else { throw APIError.invalidBody(field: String(field), "<\(field)> appears twice") }
            let text = child.text.trimmingCharacters(in: .whitespacesAndNewlines)
            switch field {
            case "ETag", "ExpirationTime", "RegistrationId":
                continue  // Read-only: Azure's service writes them, and so does Herald.
            case "Tags":
                tags = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            case "PushVariables":
                throw APIError.invalidBody(field: "PushVariables", "PushVariables are not supported by Herald; leave them out")
            case _ where field == kind.handle:
                handle = text
            case "P256DH" where kind.platform == .webpush:
                keys.p256dh = text
            case "Auth" where kind.platform == .webpush:
                keys.auth = text
            case "BodyTemplate" where isTemplate:
                body = child.text
            case "TemplateName" where isTemplate:
                name = text
            case "Expiry" where isTemplate && kind.platform == .apns:
                expiry = text
            case "Priority" where isTemplate && kind.platform == .apns:
                headers.append(JSONMember(key: "apns-priority", value: .string(text)))
            case _ where isTemplate && kind.headers.map({ field == $0 }) == true:
                for item in child.children {
                    guard kind.headerItem.map({ item.localName == $0 }) == true, let header = item.childText("Header"),
                        let value = item.child("Value")
                    else {
                        throw APIError.invalidBody(
                            field: String(field), "<\(field)> holds <\(kind.headerItem ?? "")> items, each a <Header> and a <Value>")
                    }
                    headers.append(JSONMember(key: header, value: .string(value.text)))
                }
            default:
                throw APIError.invalidBody(
                    field: String(field), "<\(field)> is not a member of <\(element)> that Herald takes; leave it out")
            }
        }
        guard let handle, !handle.isEmpty else {
            throw APIError.invalidBody(field: kind.handle, "<\(element)> needs its <\(kind.handle)>")
        }
        if kind.platform == .webpush {
            guard let p256dh = keys.p256dh, let auth = keys.auth else {
                throw APIError.invalidBody(
                    field: keys.p256dh == nil ? "P256DH" : "Auth", "a browser registration needs Endpoint, P256DH and Auth")
            }
            members.append(
                JSONMember(
                    key: "subscription",
                    value: .object([
                        JSONMember(key: "endpoint", value: .string(handle)),
                        JSONMember(
                            key: "keys",
                            value: .object([
                                JSONMember(key: "p256dh", value: .string(p256dh)), JSONMember(key: "auth", value: .string(auth)),
                            ])),
                    ])))
        } else {
            members.append(JSONMember(key: "handle", value: .string(handle)))
        }
        members.append(JSONMember(key: "tags", value: .array(tags.map(JSONValue.string))))
        if isTemplate {
            guard let body else { throw APIError.invalidBody(field: "BodyTemplate", "<\(element)> needs its <BodyTemplate>") }
            var template: [JSONMember] = [
                JSONMember(key: "name", value: .string(name.flatMap { $0.isEmpty ? nil : $0 } ?? defaultTemplateName)),
                JSONMember(key: "body", value: .string(body)),
            ]
            if !headers.isEmpty { template.append(JSONMember(key: "headers", value: .object(headers))) }
            if let expiry, !expiry.isEmpty { template.append(JSONMember(key: "expiry", value: .string(expiry))) }
            members.append(JSONMember(key: "template", value: .object(template)))
        }
        var bytes: [UInt8] = []
        JSONValue.object(members).write(into: &bytes)
        return bytes
    }

    /// An attribute by local name (`i:type` → `type`), whatever its prefix.
    private static func attribute(_ localName: String, of element: XMLTree) -> String? {
        element.attributes.first { $0.key == localName || $0.key.hasSuffix(":" + localName) }?.value
    }

    /// `i:nil="true"`: the member is absent.
    private static func isNil(_ element: XMLTree) -> Bool { attribute("nil", of: element)?.lowercased() == "true" }

    /// A validation failure of Herald's document with each field named as the request's element.
    static func renamed(_ failure: ValidationFailure, kind: Kind) -> ValidationFailure {
        ValidationFailure(
            issues: failure.issues.map { issue in
                var issue = issue
                issue.field = element(ofField: issue.field, kind: kind)
                return issue
            })
    }

    static func element(ofField field: String, kind: Kind) -> String {
        let renames: [(String, String)] = [
            ("handle", kind.handle), ("subscription.keys.p256dh", "P256DH"), ("subscription.keys.auth", "Auth"),
            ("subscription", "Endpoint"), ("tags", "Tags"), ("template.body", "BodyTemplate"), ("template.name", "TemplateName"),
            ("template.expiry", "Expiry"), ("template.headers", kind.headers ?? "BodyTemplate"), ("template", "BodyTemplate"),
        ]
        for (prefix, element) in renames where field == prefix || field.hasPrefix(prefix + ".") || field.hasPrefix(prefix + "[") {
            return element + field.dropFirst(prefix.count)
        }
        return field
    }

    // MARK: Writing

    /// The `<entry>` of `registration`, at `location` (its `id` and self link).
    static func entry(_ registration: Registration, location: String, updated: String, inFeed: Bool = false) -> String {
        let tag = "W/\"\(registration.version)\""
        var xml = "<entry a:etag=\"\(AzureXML.escaped(tag))\""
        if !inFeed { xml += " xmlns=\"\(atomNamespace)\"" }
        xml += " xmlns:a=\"\(metadataNamespace)\">"
        xml += "<id>\(AzureXML.escaped(location))</id>"
        xml += "<title type=\"text\">\(AzureXML.escaped(registration.registrationId))</title>"
        xml += "<published>\(updated)</published><updated>\(updated)</updated>"
        xml += "<link rel=\"self\" href=\"\(AzureXML.escaped(location))\"/>"
        xml += "<content type=\"application/xml\">\(description(registration))</content></entry>"
        return xml
    }

    /// The registration description, its members in the order of Azure's data contracts.
    static func description(_ registration: Registration) -> String {
        let kind = kind(of: registration.platform)
        let template = registration.template
        let element = kind.name + (template == nil ? "" : "Template") + "RegistrationDescription"
        var xml = "<\(element) xmlns=\"\(AzureXML.connectNamespace)\" xmlns:i=\"\(instanceNamespace)\">"
        func member(_ name: String, _ text: String) { xml += "<\(name)>\(AzureXML.escaped(text))</\(name)>" }
        member("ETag", String(registration.version))
        member("ExpirationTime", registration.expiresAt.map { ISO8601Timestamp.format($0) } ?? neverExpires)
        member("RegistrationId", registration.registrationId)
        if !registration.tags.isEmpty { member("Tags", registration.tags.joined(separator: ",")) }
        if registration.platform == .webpush, case .success(let subscription) = WebPushSubscription.parse(handle: registration.handle) {
            member("Endpoint", subscription.endpoint)
            member("P256DH", Base64URL.encode(subscription.p256dh))
            member("Auth", Base64URL.encode(subscription.auth))
        } else {
            member(kind.handle, registration.handle)
        }
        guard let template else { return xml + "</\(element)>" }
        xml += "<BodyTemplate>\(AzureXML.cdata(template.body))</BodyTemplate>"
        func headers() {
            guard let collection = kind.headers, let item = kind.headerItem else { return }
            guard !template.headers.isEmpty else {
                xml += "<\(collection)/>"
                return
            }
            xml += "<\(collection)>"
            for (name, value) in template.headers.sorted(by: { $0.key < $1.key }) {
                xml += "<\(item)><Header>\(AzureXML.escaped(name))</Header><Value>\(AzureXML.escaped(value))</Value></\(item)>"
            }
            xml += "</\(collection)>"
        }
        switch registration.platform {
        case .apns:
            if let expiry = template.expiry { member("Expiry", expiry) } else { xml += "<Expiry i:nil=\"true\"/>" }
            member("TemplateName", template.name)
            headers()
        case .wns:
            headers()
            member("TemplateName", template.name)
        case .fcm, .webpush:
            member("TemplateName", template.name)
        }
        return xml + "</\(element)>"
    }

    /// A feed of entries: `Registrations` at `location`, with a `next` link when there is more.
    static func feed(_ entries: [String], location: String, next: String?, updated: String) -> String {
        var xml = "<feed xmlns=\"\(atomNamespace)\"><title type=\"text\">Registrations</title>"
        xml += "<id>\(AzureXML.escaped(location))</id><updated>\(updated)</updated>"
        xml += "<link rel=\"self\" href=\"\(AzureXML.escaped(location))\"/>"
        if let next { xml += "<link rel=\"next\" href=\"\(AzureXML.escaped(next))\"/>" }
        return xml + entries.joined() + "</feed>"
    }
}

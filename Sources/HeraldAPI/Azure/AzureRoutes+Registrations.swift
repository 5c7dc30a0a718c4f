import Foundation
import HTTPTypes
import HeraldDomain
import Hummingbird
import NIOCore

/// Azure's registrations in Atom XML on `/{hub}/registrations…`, over the same cores as
/// `/v1/hubs/{hub}/registrations` (`RegistrationRoutes`): ids issued by the hub, ETags that are
/// Herald's versions, a caller without Manage limited to its own devices. Status codes are
/// those Azure's service answers (200 for a create, as its SDKs expect), not its older docs'.
extension AzureRoutes {
    func addRegistrations(to group: RouterGroup<APIRequestContext>) {
        // The SDKs spell it either way; Azure's paths are not case-sensitive.
        group.post("registrationIDs", use: createRegistrationId)
        group.post("registrationids", use: createRegistrationId)
        group.post("registrations", use: createRegistration)
        group.get("registrations", use: listRegistrations)
        group.put("registrations/{id}", use: putRegistration)
        group.get("registrations/{id}", use: getRegistration)
        group.delete("registrations/{id}", use: deleteRegistration)
        group.get("tags/{tag}/registrations", use: registrationsWithTag)
    }

    /// `POST /{hub}/registrationIDs`: 201, empty, `Location: …/{hub}/registrationids/{id}?api-version=…`.
    @Sendable func createRegistrationId(_ request: Request, context: APIRequestContext) async throws -> Response {
        try context.requireCaller().authorize(.manageOwnDevice)
        let id = try registrations.registry(of: context).issueRegistrationId()
        return Response(status: .created, headers: [.location: location(context, "registrationids/\(id)")])
    }

    /// `POST /{hub}/registrations`: a new id, the entry stored under it; 200 with the entry.
    @Sendable func createRegistration(_ request: Request, context: APIRequestContext) async throws -> Response {
        try context.requireCaller().authorize(.manageOwnDevice)
        let id = try registrations.registry(of: context).issueRegistrationId()
        return try await storeRegistration(request, id: id, expected: nil, context: context)
    }

    /// `PUT /{hub}/registrations/{id}`: create or update (at the version `If-Match` names, any
    /// with `*` or none); 410 for an id this hub did not issue, 412 for another version.
    @Sendable func putRegistration(_ request: Request, context: APIRequestContext) async throws -> Response {
        try context.requireCaller().authorize(.manageOwnDevice)
        let id = try RequestReading.parameter("id", of: context)
        try registrations.requireIssued(id, in: registrations.registry(of: context))
        return try await storeRegistration(request, id: id, expected: RequestReading.expectedVersion(request), context: context)
    }

    /// `GET /{hub}/registrations/{id}`: 200 with the entry; 404 for one unknown or deleted.
    @Sendable func getRegistration(_ request: Request, context: APIRequestContext) async throws -> Response {
        let id = try RequestReading.parameter("id", of: context)
        let registration = try await Self.goneAsNotFound { try await registrations.read(id: id, context: context) }
        return entryResponse(registration, context: context)
    }

    /// `DELETE /{hub}/registrations/{id}`: 200, empty; 404 for one unknown or deleted, 412 when
    /// `If-Match` names another version.
    @Sendable func deleteRegistration(_ request: Request, context: APIRequestContext) async throws -> Response {
        let id = try RequestReading.parameter("id", of: context)
        try await Self.goneAsNotFound { try await registrations.remove(id: id, request: request, context: context) }
        return Response(status: .ok)
    }

    /// `GET /{hub}/registrations?$top=&$filter=&continuationtoken=`: a feed, by one handle
    /// (`ChannelUri eq '…'` for any platform, or the platform's own member) or, for Manage,
    /// every registration; `x-ms-continuationtoken` names the next page.
    @Sendable func listRegistrations(_ request: Request, context: APIRequestContext) async throws -> Response {
        let query = AzureQuery(request.uri.query ?? "")
        let handle = try query.filter.map(AzureQuery.handle(filter:))
        return try await feed(tag: nil, handle: handle, query: query, path: "registrations", context: context)
    }

    /// `GET /{hub}/tags/{tag}/registrations`: the feed of the registrations with `tag` (Manage).
    @Sendable func registrationsWithTag(_ request: Request, context: APIRequestContext) async throws -> Response {
        let tag = try RequestReading.parameter("tag", of: context)
        if let problem = TagRules.problem(with: tag) { throw APIError.invalidParameter("tag", problem) }
        let query = AzureQuery(request.uri.query ?? "")
        guard query.filter == nil else {
            throw APIError.invalidParameter("$filter", "registrations are listed by tag or by handle, not both")
        }
        return try await feed(tag: tag, handle: nil, query: query, path: "tags/\(tag)/registrations", context: context)
    }

    private func feed(tag: String?, handle: String?, query: AzureQuery, path: String, context: APIRequestContext) async throws -> Response {
        let limit = try query.top(default: min(100, limits.maxPageSize), max: limits.maxPageSize)
        let page = try await registrations.list(tag: tag, handle: handle, limit: limit, cursor: query.continuation, context: context)
        let updated = ISO8601Timestamp.format(now())
        let entries = page.items.map { registration in
            AzureRegistration.entry(
                registration, location: location(context, path + "/" + registration.registrationId), updated: updated,
                inFeed: true)
        }
        let token = page.nextCursor.map(AzureQuery.encoded)
        let next = token.map { location(context, path) + "&$top=\(limit)&continuationtoken=\($0)" }
        var fields = HTTPFields()
        if let token { fields[Self.continuationToken] = token }
        let xml = AzureRegistration.feed(entries, location: location(context, path), next: next, updated: updated)
        return AzureXML.response(xml, headers: fields, contentType: AzureRegistration.feedContentType)
    }

    private func storeRegistration(_ request: Request, id: String, expected: Int64?, context: APIRequestContext) async throws -> Response {
        let bytes = try await RequestReading.body(of: request, limit: limits.maxRequestBytes)
        let entry = try AzureRegistration.read(bytes)
        let hub = try RequestReading.hub(of: context)
        let registration: Registration
        do {
            registration = try Registration.decode(entry.document, registrationId: id, hub: hub, limits: limits.registration)
        } catch {
            throw AzureRegistration.renamed(error, kind: entry.kind)
        }
        let stored = try await registrations.upsert(registration, expected: expected, context: context)
        var response = entryResponse(stored, context: context)
        response.headers[.contentLocation] = location(context, "registrations/\(stored.registrationId)")
        return response
    }

    private func entryResponse(_ registration: Registration, context: APIRequestContext) -> Response {
        let xml = AzureRegistration.entry(
            registration, location: location(context, "registrations/\(registration.registrationId)"),
            updated: ISO8601Timestamp.format(now()))
        return AzureXML.response(
            xml, headers: [.eTag: "W/\"\(registration.version)\""], contentType: AzureRegistration.entryContentType)
    }

    /// Azure answers a deleted registration as one that does not exist.
    private static func goneAsNotFound<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as APIError where error.status == .gone {
            throw APIError.notFound(error.message.replacingOccurrences(of: " was deleted", with: " (deleted)"))
        }
    }

    static let continuationToken = HTTPField.Name("x-ms-continuationtoken")!
}

/// The query of an Azure list request, read from its raw text: OData's `$top` and `$filter`,
/// whose `+` is a space, and the continuation token under either spelling the SDKs use.
struct AzureQuery {
    var parameters: [(name: String, value: String)] = []

    init(_ raw: String) {
        for pair in raw.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let decode = { (text: Substring) in
                String(text).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(text)
            }
            parameters.append((decode(parts[0]), parts.count > 1 ? decode(parts[1]) : ""))
        }
    }

    func value(_ name: String) -> String? { parameters.first { $0.name.lowercased() == name.lowercased() }?.value }

    var filter: String? { value("$filter").flatMap { $0.isEmpty ? nil : $0 } }
    var continuation: String? { value("continuationtoken").flatMap { $0.isEmpty ? nil : $0 } }

    func top(default fallback: Int, max: Int) throws -> Int {
        guard let text = value("$top") else { return fallback }
        guard let top = Int(text), (1...max).contains(top) else {
            throw APIError.invalidParameter("$top", "$top is an integer from 1 to \(max); got \"\(text)\"")
        }
        return top
    }

    /// A continuation token as a query value (the SDKs append it as they get it).
    static func encoded(_ token: String) -> String {
        token.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? token
    }

    /// The handle a `$filter` names: `<Member> eq '<value>'`, or a browser's three members
    /// joined by `and`. `ChannelUri` names any platform's handle, as on Azure.
    static func handle(filter: String) throws -> String {
        var members: [String: String] = [:]
        for clause in filter.components(separatedBy: " and ") {
            let words = clause.trimmingCharacters(in: .whitespaces)
            guard let eq = words.range(of: " eq "), words.hasSuffix("'"),
                words[eq.upperBound...].trimmingCharacters(in: .whitespaces).hasPrefix("'")
            else { throw unsupported(filter) }
            let name = words[..<eq.lowerBound].trimmingCharacters(in: .whitespaces)
            let quoted = words[eq.upperBound...].trimmingCharacters(in: .whitespaces)
            members[name] = String(quoted.dropFirst().dropLast()).replacingOccurrences(of: "''", with: "'")
        }
        // A URI the SDK percent-encoded inside the filter (a channel URI, an endpoint).
        func uri(_ text: String) -> String {
            if !text.contains("://"), let decoded = text.removingPercentEncoding, decoded.contains("://") { return decoded }
            return text
        }
        if members.count == 1, let (name, value) = members.first,
            ["ChannelUri", "DeviceToken", "GcmRegistrationId", "FcmRegistrationId", "FcmV1RegistrationId"].contains(name)
        {
            return uri(value)
        }
        if members.count == 3, let endpoint = members["Endpoint"], let p256dh = members["P256DH"], let auth = members["Auth"] {
            switch WebPushSubscription.make(endpoint: uri(endpoint), p256dh: p256dh, auth: auth) {
            case .success(let subscription): return subscription.handle
            case .failure(let problem): throw APIError.invalidParameter("$filter", "the browser's subscription: \(problem.description)")
            }
        }
        throw unsupported(filter)
    }

    private static func unsupported(_ filter: String) -> APIError {
        APIError.invalidParameter(
            "$filter",
            "Herald lists registrations by one handle ($filter=ChannelUri eq '<handle>', or DeviceToken, GcmRegistrationId, FcmV1RegistrationId, or Endpoint and P256DH and Auth); got \"\(filter.prefix(200))\""
        )
    }
}

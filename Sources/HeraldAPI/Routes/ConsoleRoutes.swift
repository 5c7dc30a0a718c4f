import Foundation
import HTTPTypes
import HeraldDomain
import Hummingbird
import NIOCore

/// The newsroom console: its static pages at `/console/` (resources of this module, read once
/// at start-up), the settings the page needs before signing in (`/console/settings.json`), and
/// `GET /v1/console/session`, which tells a signed-in page who it is. The page keeps the key in
/// memory and makes every other call through the `/v1` API like any client.
struct ConsoleRoutes: Sendable {
    /// A file of the console: its bytes and media type.
    struct Asset: Sendable {
        var bytes: [UInt8]
        var contentType: String
    }

    let assets: [String: Asset]
    let hubResource: String

    /// What every console page answer carries: a strict Content-Security-Policy (scripts,
    /// styles and connections of this origin only, no inline code, no framing), no sniffing,
    /// no referrer.
    static let securityHeaders: HTTPFields = [
        HTTPField.Name("Content-Security-Policy")!:
            "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
            + "object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
        HTTPField.Name("X-Content-Type-Options")!: "nosniff",
        HTTPField.Name("Referrer-Policy")!: "no-referrer",
        HTTPField.Name("X-Frame-Options")!: "DENY",
        .cacheControl: "no-cache",
    ]

    func add(to router: Router<APIRequestContext>, v1: RouterGroup<APIRequestContext>) {
        router.get("console", use: page)
        router.get("console/settings.json", use: settings)
        router.get("console/{file}", use: file)
        for group in [v1, v1.group("hubs/{hub}")] { group.get("console/session", use: session) }
    }

    @Sendable func page(_ request: Request, context: APIRequestContext) async throws -> Response {
        try answer(name: "index.html")
    }

    @Sendable func file(_ request: Request, context: APIRequestContext) async throws -> Response {
        try answer(name: RequestReading.parameter("file", of: context))
    }

    /// `{"hubUri", "defaultHub"}`: the resource the page signs its tokens for.
    @Sendable func settings(_ request: Request, context: APIRequestContext) async throws -> Response {
        var response = Response.json(
            .object([
                JSONMember(key: "hubUri", value: .string(hubResource)),
                JSONMember(key: "defaultHub", value: .string(HubName.default.rawValue)),
            ]))
        for field in Self.securityHeaders { response.headers[field.name] = field.value }
        return response
    }

    /// `GET /v1/console/session` (Send, Manage): the hub, the policy and its rights; 403
    /// `insufficient_rights` for a Listen key or a user token, which cannot open the console.
    @Sendable func session(_ request: Request, context: APIRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        try caller.authorize(.openConsole)
        let hub = try RequestReading.hub(of: context)
        let (policy, rights, namespace): (String, Set<AccessRight>, Bool) =
            switch caller {
            case .policy(let name, let rights): (name, rights, true)
            case .hubPolicy(_, let name, let rights): (name, rights, false)
            case .user(let id): ("user:" + id, [], false)
            }
        return .json(
            .object([
                JSONMember(key: "hub", value: .string(hub.rawValue)),
                JSONMember(key: "policy", value: .string(policy)),
                JSONMember(key: "rights", value: .array(rights.map(\.rawValue).sorted().map { .string($0) })),
                JSONMember(key: "namespace", value: .bool(namespace)),
            ]))
    }

    private func answer(name: String) throws -> Response {
        guard let asset = assets[name] else { throw APIError.notFound("a console file \"\(name)\"") }
        var headers = Self.securityHeaders
        headers[.contentType] = asset.contentType
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: asset.bytes)))
    }

    /// The console's files (the `Console` folder of this module's resources), by name; nil when
    /// the resource bundle was not installed next to the executable.
    static func bundledAssets() -> [String: Asset]? {
        guard let folder = Bundle.module.url(forResource: "Console", withExtension: nil),
            let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path)
        else { return nil }
        var assets: [String: Asset] = [:]
        for name in names {
            guard let type = contentType(of: name),
                let data = try? Data(contentsOf: folder.appendingPathComponent(name))
            else { continue }
            assets[name] = Asset(bytes: [UInt8](data), contentType: type)
        }
        return assets["index.html"] == nil ? nil : assets
    }

    /// The media type of a console file by its extension; nil for files the console does not serve.
    static func contentType(of name: String) -> String? {
        switch (name as NSString).pathExtension {
        case "html": "text/html; charset=utf-8"
        case "js": "text/javascript; charset=utf-8"
        case "css": "text/css; charset=utf-8"
        case "svg": "image/svg+xml"
        case "png": "image/png"
        default: nil
        }
    }
}

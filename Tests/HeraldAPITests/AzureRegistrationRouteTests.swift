import Foundation
import HTTPTypes
@testable import HeraldAPI
import HeraldDomain
import Hummingbird
import HummingbirdTesting
import Testing

/// Azure's registrations in Atom XML, as its SDKs send and read them.
@Suite("Azure Notification Hubs routes: /{hub}/registrations in Atom XML")
struct AzureRegistrationRouteTests {
    static let connect = "http://schemas.microsoft.com/netservices/2010/10/servicebus/connect"

    /// An Atom entry holding `description` (its members as the SDKs write them, in any order).
    static func entry(_ element: String, _ members: String) -> String {
        #"<?xml version="1.0" encoding="utf-8"?><entry xmlns="http://www.w3.org/2005/Atom"><content type="application/xml">"#
            + #"<\#(element) xmlns:i="http://www.w3.org/2001/XMLSchema-instance" xmlns="\#(connect)">\#(members)</\#(element)>"#
            + "</content></entry>"
    }

    static let appleTemplate = entry(
        "AppleTemplateRegistrationDescription",
        "<RegistrationId i:nil=\"true\"/><Tags>World, Sports</Tags><DeviceToken>\(Fixture.apnsToken.uppercased())</DeviceToken>"
            + #"<BodyTemplate><![CDATA[{"aps":{"alert":"$(News_English)"}}]]></BodyTemplate><Expiry i:nil="true"/>"#
            + "<TemplateName>news</TemplateName><ApnsHeaders><ApnsHeader><Header>apns-priority</Header><Value>5</Value></ApnsHeader></ApnsHeaders>"
    )

    /// The registration `id` of the `sports` hub, as stored.
    static func stored(_ hub: TestHub, _ id: String) async throws -> Registration? {
        if case .found(let registration) = try await hub.registry.store(for: HubName("sports")!).registration(id: id) {
            return registration
        }
        return nil
    }

    /// The id at the end of a `Location` URL's path.
    static func id(of location: String?) throws -> String {
        let url = try #require(location.flatMap(URL.init(string:)))
        return url.lastPathComponent
    }

    @Test("registrationIDs, then create, read, update with If-Match and delete, answered as Azure's service answers")
    func lifecycle() async throws {
        let hub = TestHub()
        try await hub.run { client async throws in
            let issued = try await client.call(.post, "/sports/registrationIDs?api-version=2020-06", TestHub.listen)
            #expect(issued.status == .created && issued.text.isEmpty)
            let location = try #require(issued.headers[.location])
            #expect(location.hasPrefix("http://localhost:8080/sports/registrationids/") && location.hasSuffix("?api-version=2020-06"))
            let id = try Self.id(of: location)

            let created = try await client.call(
                .put, "/sports/registrations/\(id)?api-version=2020-06", TestHub.listen, body: Self.appleTemplate)
            #expect(created.status == .ok, "\(created.text)")
            #expect(created.headers[.contentType] == "application/atom+xml; type=entry; charset=utf-8")
            #expect(created.headers[.eTag] == #"W/"1""#)
            let entry = try XMLTree.read(Array(created.text.utf8))
            #expect(entry.attributes["a:etag"] == #"W/"1""#)
            #expect(entry.childText("title") == id)
            let description = try #require(entry.child("content")?.children.first)
            #expect(description.name == "AppleTemplateRegistrationDescription")
            // The members in the order of Azure's data contract, which .NET's reader needs.
            #expect(
                description.children.map(\.name) == [
                    "ETag", "ExpirationTime", "RegistrationId", "Tags", "DeviceToken", "BodyTemplate", "Expiry", "TemplateName",
                    "ApnsHeaders",
                ])
            #expect(description.childText("ETag") == "1" && description.childText("RegistrationId") == id)
            #expect(description.childText("Tags") == "World,Sports")
            #expect(description.childText("DeviceToken") == Fixture.apnsToken.uppercased())
            #expect(description.childText("BodyTemplate") == #"{"aps":{"alert":"$(News_English)"}}"#)
            #expect(description.child("ApnsHeaders")?.child("ApnsHeader")?.childText("Value") == "5")

            let stored = try #require(await Self.stored(hub, id))
            #expect(stored.platform == .apns && stored.tags == ["World", "Sports"] && stored.template?.name == "news")
            #expect(stored.template?.headers == ["apns-priority": "5"])

            let read = try await client.call(.get, "/sports/registrations/\(id)", TestHub.listen)
            #expect(read.status == .ok && read.headers[.eTag] == #"W/"1""#, "\(read.text)")
            #expect(try XMLTree.read(Array(read.text.utf8)).child("content") == entry.child("content"))

            // An update at a version that is not the current one is refused; at the current one it goes.
            let native = Self.entry("AppleRegistrationDescription", "<Tags>World</Tags><DeviceToken>\(Fixture.apnsToken)</DeviceToken>")
            let stale = try await client.call(.put, "/sports/registrations/\(id)", TestHub.listen, body: native, ifMatch: #"W/"7""#)
            #expect(stale.status == .preconditionFailed, "\(stale.text)")
            #expect(stale.text.hasPrefix("<Error><Code>412</Code>"))
            let updated = try await client.call(.put, "/sports/registrations/\(id)", TestHub.listen, body: native, ifMatch: #""1""#)
            #expect(updated.status == .ok && updated.headers[.eTag] == #"W/"2""#, "\(updated.text)")
            #expect(updated.text.contains("<AppleRegistrationDescription ") && !updated.text.contains("BodyTemplate"))

            #expect(try await client.call(.delete, "/sports/registrations/\(id)", TestHub.listen, ifMatch: "*").status == .ok)
            let gone = try await client.call(.get, "/sports/registrations/\(id)", TestHub.listen)
            #expect(gone.status == .notFound && gone.text.hasPrefix("<Error><Code>404</Code>"), "\(gone.text)")
            #expect(try await client.call(.delete, "/sports/registrations/\(id)", TestHub.listen).status == .notFound)
            // An id this hub never issued.
            #expect(try await client.call(.put, "/sports/registrations/123-234-1", TestHub.listen, body: native).status == .gone)
        }
    }

    @Test("POST creates under a new id; each platform's description maps to Herald's and back")
    func platforms() async throws {
        let hub = TestHub()
        let key = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
        let auth = "BTBZMqHH6r4Tts7J_aSIgg"
        let endpoint = "https://fcm.googleapis.com/fcm/send/dQw4w9WgXcQ:APA91bFoo"
        let channel = "https://db5p.notify.windows.com/?token=AwYAAAB%2bQ"
        let cases: [(String, String, Platform, String)] = [
            (
                "GcmRegistrationDescription", "<GcmRegistrationId>\(Fixture.fcmToken)</GcmRegistrationId>", .fcm,
                "FcmV1RegistrationDescription"
            ),
            (
                "FcmV1TemplateRegistrationDescription",
                #"<FcmV1RegistrationId>\#(Fixture.fcmToken)</FcmV1RegistrationId><BodyTemplate><![CDATA[{"message":{"notification":{"body":"$(News_English)"}}}]]></BodyTemplate>"#,
                .fcm, "FcmV1TemplateRegistrationDescription"
            ),
            (
                "WindowsTemplateRegistrationDescription",
                "<ChannelUri>\(channel)</ChannelUri><BodyTemplate><![CDATA[<toast><visual><binding template=\"ToastText01\"><text id=\"1\">$(News_English)</text></binding></visual></toast>]]></BodyTemplate>"
                    + "<WnsHeaders><WnsHeader><Header>X-WNS-Type</Header><Value>wns/toast</Value></WnsHeader></WnsHeaders>",
                .wns, "WindowsTemplateRegistrationDescription"
            ),
            (
                "BrowserRegistrationDescription", "<Endpoint>\(endpoint)</Endpoint><P256DH>\(key)</P256DH><Auth>\(auth)</Auth>", .webpush,
                "BrowserRegistrationDescription"
            ),
        ]
        try await hub.run { client async throws in
            for (element, members, platform, answered) in cases {
                let reply = try await client.call(
                    .post, "/sports/registrations", TestHub.listen, body: Self.entry(element, "<Tags>World</Tags>" + members))
                #expect(reply.status == .ok, "\(element): \(reply.text)")
                let description = try #require(try XMLTree.read(Array(reply.text.utf8)).child("content")?.children.first)
                #expect(description.name == answered, "\(element)")
                let id = try #require(description.childText("RegistrationId"))
                #expect(reply.headers[.contentLocation] == "http://localhost:8080/sports/registrations/\(id)?api-version=2020-06")
                let stored = try #require(await Self.stored(hub, id))
                #expect(stored.platform == platform && stored.hub == HubName("sports"), "\(element)")
                if platform == .webpush {
                    #expect(description.childText("Endpoint") == endpoint && description.childText("P256DH") == key)
                    #expect(description.childText("Auth") == auth)
                }
                if platform == .wns {
                    #expect(stored.template?.headers == ["X-WNS-Type": "wns/toast"])
                    #expect(description.children.map(\.name).suffix(3) == ["BodyTemplate", "WnsHeaders", "TemplateName"])
                }
            }
            // .NET may write the base type with its own in i:type.
            let typed =
                #"<?xml version="1.0"?><entry xmlns="http://www.w3.org/2005/Atom"><content type="application/xml"><RegistrationDescription xmlns:i="http://www.w3.org/2001/XMLSchema-instance" i:type="AppleRegistrationDescription" xmlns="\#(Self.connect)"><DeviceToken>\#(Fixture.apnsToken)</DeviceToken></RegistrationDescription></content></entry>"#
            let reply = try await client.call(.post, "/sports/registrations", TestHub.listen, body: typed)
            #expect(reply.status == .ok && reply.text.contains("<AppleRegistrationDescription "), "\(reply.text)")
        }
    }

    @Test("what Herald does not take is refused in Azure's XML, naming the element")
    func refusals() async throws {
        let hub = TestHub()
        let cases: [(String, String)] = [
            ("<entry/>", "content"),
            ("<entry><content>", "not well-formed XML"),
            ("<feed/>", "entry"),
            (Self.entry("BaiduRegistrationDescription", "<BaiduUserId>u</BaiduUserId><BaiduChannelId>c</BaiduChannelId>"), "Baidu"),
            (Self.entry("AppleRegistrationDescription", "<Tags>World</Tags>"), "DeviceToken"),
            (Self.entry("AppleRegistrationDescription", "<DeviceToken>xyz</DeviceToken>"), "DeviceToken"),
            (
                Self.entry(
                    "AppleRegistrationDescription",
                    "<DeviceToken>\(Fixture.apnsToken)</DeviceToken><PushVariables>{\"a\":\"b\"}</PushVariables>"),
                "PushVariables"
            ),
            (Self.entry("AppleRegistrationDescription", "<DeviceToken>\(Fixture.apnsToken)</DeviceToken><Colour>red</Colour>"), "Colour"),
            (Self.entry("AppleRegistrationDescription", "<DeviceToken>\(Fixture.apnsToken)</DeviceToken><Tags>a b</Tags>"), "Tags"),
            (Self.entry("AppleTemplateRegistrationDescription", "<DeviceToken>\(Fixture.apnsToken)</DeviceToken>"), "BodyTemplate"),
            (
                Self.entry(
                    "AppleTemplateRegistrationDescription",
                    "<DeviceToken>\(Fixture.apnsToken)</DeviceToken><BodyTemplate>{\"aps\":</BodyTemplate>"),
                "BodyTemplate"
            ),
            (
                Self.entry(
                    "AppleTemplateRegistrationDescription",
                    "<DeviceToken>\(Fixture.apnsToken)</DeviceToken><BodyTemplate>{}</BodyTemplate><ApnsHeaders><ApnsHeader><Header>apns-topic</Header><Value>a&#13;&#10;b</Value></ApnsHeader></ApnsHeaders>"
                ), "ApnsHeaders"
            ),
            (Self.entry("BrowserRegistrationDescription", "<Endpoint>https://push.example.net/a</Endpoint><P256DH>AAAA</P256DH>"), "Auth"),
        ]
        try await hub.run { client async throws in
            for (body, element) in cases {
                let reply = try await client.call(.post, "/sports/registrations", TestHub.listen, body: body)
                #expect(reply.status == .badRequest, "\(body): \(reply.text)")
                #expect(reply.text.hasPrefix("<Error><Code>400</Code><Detail>"), "\(reply.text)")
                #expect(reply.text.contains(element), "\(body) should name \(element): \(reply.text)")
            }
        }
    }

    @Test("lists: by handle ($filter, ChannelUri for any platform), by tag, paged with x-ms-continuationtoken; Listen only by handle")
    func lists() async throws {
        let hub = TestHub()
        try await hub.run { client async throws in
            var ids: [String] = []
            for number in 0..<5 {
                let token = number < 3 ? Fixture.apnsToken.uppercased() : Fixture.otherApnsToken
                let body = Self.entry("AppleRegistrationDescription", "<Tags>World,n\(number)</Tags><DeviceToken>\(token)</DeviceToken>")
                let reply = try await client.call(.post, "/sports/registrations", TestHub.listen, body: body)
                ids.append(
                    try #require(try XMLTree.read(Array(reply.text.utf8)).child("content")?.children.first?.childText("RegistrationId")))
            }
            func entries(_ text: String) throws -> [String] {
                try XMLTree.read(Array(text.utf8)).children.filter { $0.localName == "entry" }.compactMap { $0.childText("title") }
            }
            let filter = "$filter=ChannelUri+eq+'\(Fixture.apnsToken.uppercased())'"
            let byHandle = try await client.call(.get, "/sports/registrations?api-version=2020-06&\(filter)", TestHub.listen)
            #expect(
                byHandle.status == .ok && byHandle.headers[.contentType] == "application/atom+xml; type=feed; charset=utf-8",
                "\(byHandle.text)")
            #expect(Set(try entries(byHandle.text)) == Set(ids.prefix(3)))
            let byDeviceToken = try await client.call(
                .get, "/sports/registrations?$filter=DeviceToken%20eq%20'\(Fixture.otherApnsToken)'", TestHub.listen)
            #expect(Set(try entries(byDeviceToken.text)) == Set(ids.suffix(2)))

            // Every registration with World, two at a time, as the SDKs page: the token as given.
            var seen: [String] = []
            var token: String?
            var pages = 0
            repeat {
                let query = "$top=2" + (token.map { "&continuationtoken=\($0)" } ?? "")
                let page = try await client.call(.get, "/sports/tags/World/registrations?\(query)", TestHub.manage)
                #expect(page.status == .ok, "\(page.text)")
                let found = try entries(page.text)
                #expect(found.count <= 2)
                seen += found
                token = page.headers[AzureRoutes.continuationToken]
                pages += 1
            } while token != nil && pages < 10
            #expect(Set(seen) == Set(ids) && seen.count == 5)
            let all = try await client.call(.get, "/sports/registrations?$top=100", TestHub.manage)
            #expect(Set(try entries(all.text)) == Set(ids))

            // Listen lists by handle only; an unknown filter is a 400 naming $filter.
            #expect(try await client.call(.get, "/sports/tags/World/registrations", TestHub.listen).status == .forbidden)
            let odd = try await client.call(.get, "/sports/registrations?$filter=Tags+eq+'World'", TestHub.manage)
            #expect(odd.status == .badRequest && odd.text.contains("$filter"), "\(odd.text)")
            #expect(try await client.call(.get, "/sports/registrations?$top=0", TestHub.manage).status == .badRequest)
        }
    }
}

import Foundation
import HeraldDomain
import Testing

/// The templates of the seed tutorials and of Azure's "Templates" documentation.
@Suite("Template seeds and Azure examples")
struct TemplateSeedTests {
    /// The locale-agnostic event of the localized breaking-news tutorial (and docs/topics.md).
    static let summit: [String: String] = [
        "News_English": "Summit ends", "News_French": "Fin du sommet", "News_Mandarin": "峰会结束",
    ]

    @Test(
        "localized breaking news: each device's template picks its language",
        arguments: [
            ("English", "Summit ends"), ("French", "Fin du sommet"), ("Mandarin", "峰会结束"),
        ])
    func localized(_ locale: String, _ expected: String) throws {
        // The tutorial builds this body with [NSString stringWithFormat:] per locale.
        let body = "{\"aps\":{\"alert\":\"$(News_\(locale))\"},\"inAppMessage\":\"$(News_\(locale))\"}"
        let template = try CompiledTemplate.compile(body, format: .json)
        #expect(template.referencedProperties == ["news_\(locale.lowercased())"])
        #expect(
            template.render(TemplateProperties(Self.summit)) == "{\"aps\":{\"alert\":\"\(expected)\"},\"inAppMessage\":\"\(expected)\"}")
    }

    @Test("the delivery payload of the documented contract")
    func designPayload() throws {
        let template = try CompiledTemplate.compile(
            ##"{"aps":{"alert":"$(News_French)"},"inAppMessage":"$(News_French)"}"##, format: .json)
        #expect(template.render(TemplateProperties(Self.summit)) == ##"{"aps":{"alert":"Fin du sommet"},"inAppMessage":"Fin du sommet"}"##)
    }

    @Test(
        "breaking news by category: one template, a message per tag",
        arguments: [
            "World", "Politics", "Business", "Technology", "Science", "Sports",
        ])
    func categories(_ category: String) throws {
        let template = try CompiledTemplate.compile(##"{"aps":{"alert":"$(messageParam)"}}"##, format: .json)
        let output = template.render(["messageParam": "Breaking \(category) News!"])
        #expect(output == "{\"aps\":{\"alert\":\"Breaking \(category) News!\"}}")
    }

    @Test("the tutorial's expiry template is the constant 0")
    func expiry() throws {
        let template = try CompiledTemplate.compile("0", format: .text)
        #expect(template.isConstant)
        #expect(template.render([:]) == "0")
    }

    @Test("iOS 8 category payload: constant, and with the alert templated")
    func actionableNotification() throws {
        let seed = """
            {
              "aps": {
                "alert": "Invitation from Jane Appleseed",
                "category": "INVITE_CATEGORY"
              }
            }
            """
        let constant = try CompiledTemplate.compile(seed, format: .json)
        #expect(constant.isConstant)
        #expect(constant.render(TemplateProperties(Self.summit)) == seed)

        let templated = try CompiledTemplate.compile(##"{"aps":{"alert":"$(inviter)","category":"INVITE_CATEGORY"}}"##, format: .json)
        let output = templated.render(["inviter": "Invitation from Jane Appleseed"])
        #expect(output == ##"{"aps":{"alert":"Invitation from Jane Appleseed","category":"INVITE_CATEGORY"}}"##)
    }

    @Test("WNS toast")
    func toast() throws {
        let template = try CompiledTemplate.compile(
            ##"<toast><visual><binding template="ToastText01"><text id="1">$(News_English)</text></binding></visual></toast>"##,
            format: .xml)
        let output = template.render(TemplateProperties(Self.summit))
        #expect(output == ##"<toast><visual><binding template="ToastText01"><text id="1">Summit ends</text></binding></visual></toast>"##)
        #expect(TemplateOutput.xml(output)?.text["text"] == "Summit ends")
    }

    @Test("Azure: the same message to iOS and Windows")
    func crossPlatform() throws {
        let properties: TemplateProperties = ["message": "Hello!"]
        let ios = try CompiledTemplate.compile(##"{"aps": {"alert": "$(message)"}}"##, format: .json)
        #expect(ios.render(properties) == ##"{"aps": {"alert": "Hello!"}}"##)
        let windows = try CompiledTemplate.compile(
            """
            <toast>
                <visual>
                    <binding template="ToastText01">
                        <text id="1">$(message)</text>
                    </binding>
                </visual>
            </toast>
            """, format: .xml)
        let output = windows.render(properties)
        #expect(output.contains(##"<text id="1">Hello!</text>"##))
        #expect(TemplateOutput.xml(output)?.text["text"] == "Hello!")
    }

    @Test("Azure: #() makes the badge a number")
    func badge() throws {
        let template = try CompiledTemplate.compile(##"{"aps":{"alert":"$(message)","badge":"#(count)"}}"##, format: .json)
        let output = template.render(["message": "New items", "count": "40"])
        #expect(output == ##"{"aps":{"alert":"New items","badge":40}}"##)
        let aps = (TemplateOutput.json(output) as? [String: Any])?["aps"] as? [String: Any]
        #expect((aps?["badge"] as? NSNumber)?.intValue == 40)
    }

    @Test("Azure: personalized weather, a composite per device")
    func weather() throws {
        let celsius = try CompiledTemplate.compile(##"{"aps":{"alert":"{'Temperature: ' + $(tempC) + ' C'}"}}"##, format: .json)
        let fahrenheit = try CompiledTemplate.compile(
            ##"<toast><visual><binding template="ToastText01"><text id="1">{'Temperature: ' + $(tempF) + ' F'}</text></binding></visual></toast>"##,
            format: .xml)
        let event: TemplateProperties = ["tempC": "20", "tempF": "68"]
        #expect(celsius.render(event) == ##"{"aps":{"alert":"Temperature: 20 C"}}"##)
        #expect(TemplateOutput.xml(fahrenheit.render(event))?.text["text"] == "Temperature: 68 F")
    }

    @Test("headers of a registration (the documented contract) render with the same engine")
    func headers() throws {
        let pushType = try CompiledTemplate.compile("alert", format: .text)
        let wnsType = try CompiledTemplate.compile("wns/toast", format: .text)
        let expiry = try CompiledTemplate.compile("$(expiresAt)", format: .text)
        let event: TemplateProperties = ["expiresAt": "2026-11-21T19:00:00Z"]
        #expect(pushType.render(event) == "alert")
        #expect(wnsType.render(event) == "wns/toast")
        #expect(expiry.render(event) == "2026-11-21T19:00:00Z")
    }

    // MARK: The examples of docs/templates.md

    @Test("docs: the tutorial's unquoted sketch is refused where the first key is")
    func unquotedSketch() {
        do {
            _ = try CompiledTemplate.compile(##"{ aps: { alert: "$(News_French)" } }"##, format: .json)
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .invalidJSON)
            #expect(error.line == 1 && error.column == 3)
        }
    }

    @Test("docs: a composite written with entities in XML text")
    func entityComposite() throws {
        let template = try CompiledTemplate.compile("<t>{&apos;Tom &amp; &apos; + $(x)}</t>", format: .xml)
        let output = template.render(["x": "Jerry"])
        #expect(output == "<t>Tom &amp; Jerry</t>")
        #expect(TemplateOutput.xml(output)?.text["t"] == "Tom & Jerry")
    }

    @Test("docs: badge, clipped title, link and composite in one body")
    func richBody() throws {
        let template = try CompiledTemplate.compile(
            ##"{"aps":{"alert":{"title":".(title, 30)","body":"{$(author:{Newsroom}) + ': ' + $(summary, 120)}"},"badge":"#(unread)"},"##
                + "\n" + ##" "url":"https://news.example/story?id=%(storyId)"}"##,
            format: .json)
        let output = template.render([
            "title": "Leaders agree on a framework for the next decade", "summary": "Talks ended late.",
            "unread": "3", "storyId": "a/b 1",
        ])
        let object = TemplateOutput.json(output) as? [String: Any]
        let aps = object?["aps"] as? [String: Any]
        let alert = aps?["alert"] as? [String: Any]
        #expect(alert?["title"] as? String == "Leaders agree on a framewor...")
        #expect(alert?["body"] as? String == "Newsroom: Talks ended late.")
        #expect((aps?["badge"] as? NSNumber)?.intValue == 3)
        #expect(object?["url"] as? String == "https://news.example/story?id=a%2Fb%201")
    }

    @Test("docs: a toast with a composite image URL")
    func toastImage() throws {
        let template = try CompiledTemplate.compile(
            """
            <toast><visual><binding template="ToastImageAndText01">
              <image id="1" src="{'https://news.example/img/' + %(imageId) + '.jpg'}"/>
              <text id="1">.(headline, 60)</text>
            </binding></visual></toast>
            """, format: .xml)
        let document = TemplateOutput.xml(template.render(["imageId": "42 x", "headline": "Summit <ends> & more"]))
        #expect(document?.attributes["image"]?["src"] == "https://news.example/img/42%20x.jpg")
        #expect(document?.text["text"] == "Summit <ends> & more")
    }
}

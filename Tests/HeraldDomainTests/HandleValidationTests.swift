import Testing
@testable import HeraldDomain

@Suite("Per-platform handle validation")
struct HandleValidationTests {
    @Test(
        "accepts real-looking handles",
        arguments: [
            (Platform.apns, ModelFixtures.apnsToken),
            (.apns, String(repeating: "AB", count: 32)),
            (.apns, String(repeating: "0f", count: 100)),
            (.fcm, ModelFixtures.fcmToken),
            (.fcm, "cX2b_Ew-Rz8:APA91bE" + String(repeating: "x", count: 140)),
            (.wns, ModelFixtures.wnsChannel),
            (.wns, "https://wns2-by3p.notify.windows.com/w/?token=BQYAAAD"),
            (.webpush, ModelFixtures.webPushEndpoint),
            (.webpush, "https://updates.push.services.mozilla.com/wpush/v2/gAAAAABf"),
        ])
    func accepts(platform: Platform, handle: String) {
        #expect(platform.handleProblem(handle) == nil)
    }

    @Test(
        "refuses with a message that says why",
        arguments: [
            (Platform.apns, "a1b2c3...", "hexadecimal"),
            (.apns, String(repeating: "a", count: 63), "63"),
            (.apns, String(repeating: "a", count: 65), "even number"),
            (.apns, String(repeating: "ab", count: 101), "202"),
            (.apns, "zz" + String(repeating: "a", count: 62), "'z' at position 1"),
            (.apns, "", "0"),
            (.fcm, "short", "this one has 5"),
            (.fcm, String(repeating: "a", count: 40) + " " + String(repeating: "b", count: 40), "a space at position 41"),
            (.fcm, String(repeating: "a", count: 40) + "/", "'/' at position 41"),
            (.fcm, String(repeating: "a", count: 1025), "1025"),
            (.wns, "http://db5.notify.windows.com/?token=x", "https"),
            (.wns, "https://notify.windows.com.evil.example/?token=x", "notify.windows.com"),
            (.wns, "https://example.com/?token=x", "\"example.com\""),
            (.wns, "db5.notify.windows.com", "absolute https URL"),
            (.webpush, "http://push.example/abc", "https"),
            (.webpush, "not a url", "absolute https URL"),
            (.webpush, "https://" + String(repeating: "a", count: 4100), "at most 4096"),
        ])
    func refuses(platform: Platform, handle: String, messagePart: String) throws {
        let message = try #require(platform.handleProblem(handle))
        #expect(message.contains(messagePart), "\(message)")
    }

    @Test("an invalid handle is an invalid_handle issue at the given field")
    func issueShape() {
        let issue = Platform.apns.handleIssue("xyz", field: "pushChannel")
        #expect(issue?.field == "pushChannel")
        #expect(issue?.code == "invalid_handle")
    }
}

import Foundation
import HeraldPush
import Testing

@Suite("apns-id from the delivery id")
struct APNsRequestIDTests {
    @Test("the same delivery always gets the same version-5 UUID; another delivery another one")
    func deterministic() {
        let first = APNsRequestID.forDelivery("bn-1/7f3c2a/newsTemplate")
        #expect(first == APNsRequestID.forDelivery("bn-1/7f3c2a/newsTemplate"))
        #expect(first != APNsRequestID.forDelivery("bn-1/7f3c2b/newsTemplate"))
        let text = first.uuidString
        // xxxxxxxx-xxxx-5xxx-[89AB]xxx-xxxxxxxxxxxx
        let characters = Array(text)
        #expect(characters[14] == "5")
        #expect("89AB".contains(characters[19]))
    }
}

import HeraldDomain
import Testing

@Suite("Header field rules")
struct HeaderFieldRulesTests {
    @Test(
        "control characters but tab are refused, naming the first and its position",
        arguments: [
            ("alert", nil),
            ("a\tb", nil),
            ("Grüße", nil),
            ("a\r\nx-evil: 1", "a carriage return (CR) at position 2"),
            ("v\n", "a line feed (LF) at position 2"),
            ("background\u{0}", "NUL at position 11"),
            ("x\u{7F}", "control byte 0x7F at position 2"),
        ] as [(String, String?)])
    func values(value: String, problem: String?) {
        let found = HeaderFieldRules.valueProblem(value)
        if let problem {
            #expect(found?.hasSuffix(problem) == true, "\(String(describing: found))")
        } else {
            #expect(found == nil)
        }
    }

    @Test("a block is measured as HTTP/2 measures a header list")
    func blockSize() {
        let name = "apns-x"
        let value = String(repeating: "v", count: HeaderFieldRules.maxBlockBytes - name.utf8.count - HeaderFieldRules.fieldOverhead)
        #expect(HeaderFieldRules.problem(with: DeliveryHeaders([.init(name: name, value: value)])) == nil)
        let over = DeliveryHeaders([.init(name: name, value: value + "v")])
        #expect(HeaderFieldRules.problem(with: over) == "the headers add up to 8193 bytes; the limit is 8192")
        let evil = DeliveryHeaders([.init(name: "apns-push-type", value: "alert"), .init(name: "apns-collapse-id", value: "a\nb")])
        #expect(HeaderFieldRules.problem(with: evil)?.hasPrefix("header apns-collapse-id: ") == true)
    }
}

import HeraldDomain
import Testing

@Suite("Tag expressions: limits")
struct TagExpressionLimitsTests {
    /// `t0 <op> t1 <op> ...`, and the 1-based column where tag `index` starts.
    static func chain(_ count: Int, _ separator: String) -> String {
        (0..<count).map { "t\($0)" }.joined(separator: separator)
    }

    static func column(ofTag index: Int, in text: String) -> Int {
        let tokens = text.split(separator: " ", omittingEmptySubsequences: false)
        var column = 1
        var seen = 0
        for token in tokens {
            let tag = token.drop { $0 == "!" || $0 == "(" }
            if !tag.isEmpty, tag.first?.isLetter == true {
                if seen == index { return column + (token.count - tag.count) }
                seen += 1
            }
            column += token.count + 1
        }
        return -1
    }

    @Test("default mode has no 6/20-tag ceiling: 500 mixed tags parse")
    func defaultAllowsManyTags() throws {
        let text = (0..<250).map { "(t\($0) && !u\($0))" }.joined(separator: " || ")
        let expression = try TagExpression.parse(text)
        #expect(expression.tagCount == 500)
        #expect(expression.referencedTags.count == 500)
        #expect(expression.evaluate(["t7"]))
        #expect(!expression.evaluate(["t7", "u7"]))
    }

    @Test("default mode: 1,000 tags parse, the 1,001st is rejected where it stands")
    func defaultTagCeiling() throws {
        #expect(try TagExpression.parse(Self.chain(1_000, " || ")).tagCount == 1_000)
        let text = Self.chain(1_001, " && ")
        let error = #expect(throws: TagExpressionError.self) { try TagExpression.parse(text) }
        #expect(error?.code == .tooManyTags)
        #expect(error?.column == Self.column(ofTag: 1_000, in: text))
        #expect(error?.message == "expression has more than 1000 tags; at most 1000 are allowed")
    }

    @Test("Azure mode: 20 tags when OR-only", arguments: [1, 2, 19, 20])
    func azureOrOnlyAccepted(count: Int) throws {
        let expression = try TagExpression.parse(Self.chain(count, " || "), limits: .azure)
        #expect(expression.isOrOnly)
        #expect(expression.tagCount == count)
    }

    @Test("Azure mode: the 21st OR-only tag is rejected")
    func azureOrOnlyRejected() {
        let text = Self.chain(21, " || ")
        let error = #expect(throws: TagExpressionError.self) { try TagExpression.parse(text, limits: .azure) }
        #expect(error?.code == .tooManyTags)
        #expect(error?.column == Self.column(ofTag: 20, in: text))
        #expect(error?.message == "expression has more than 20 tags; at most 20 are allowed")
    }

    @Test(
        "Azure mode: 6 tags otherwise",
        arguments: [
            "t0 && t1 && t2 && t3 && t4 && t5",
            "(t0 || t1 || t2 || t3 || t4) && !t5",
            "!t0 || t1 || t2 || t3 || t4 || t5",
            "(follows_RedSox || follows_Cardinals) && location_Boston",
        ])
    func azureCombinedAccepted(text: String) throws {
        #expect(try TagExpression.parse(text, limits: .azure).tagCount <= 6)
    }

    @Test(
        "Azure mode: a 7th tag is rejected unless OR-only",
        arguments: [
            "t0 && t1 && t2 && t3 && t4 && t5 && t6",
            "(t0 || t1 || t2 || t3 || t4 || t5) && t6",
            "t0 || t1 || t2 || t3 || t4 || t5 || !t6",
            "!t0 || t1 || t2 || t3 || t4 || t5 || t6",
            "t0 || t1 || t2 || t3 || t4 || t5 || t6 || t7 || t8 && t9",
        ])
    func azureCombinedRejected(text: String) {
        let error = #expect(throws: TagExpressionError.self) { try TagExpression.parse(text, limits: .azure) }
        #expect(error?.code == .tooManyTags)
        #expect(error?.column == Self.column(ofTag: 6, in: text))
        #expect(error?.message.contains("Azure-compatible mode allows at most 6 unless the tags are only joined by '||'") == true)
        // The same expressions are fine by default.
        #expect(throws: Never.self) { try TagExpression.parse(text) }
    }

    @Test("Azure limits are a mode, not the default")
    func azureIsOptIn() {
        #expect(TagExpressionLimits.azure.azureCompatible)
        #expect(!TagExpressionLimits.default.azureCompatible)
        #expect(TagExpressionLimits.default.maxTags >= 1_000)
        #expect(TagExpressionLimits.default.maxTagLength == 120)
        #expect(TagExpressionLimits.azure.maxTagLength == 120)
    }

    @Test("nesting: 64 levels of '(' or '!' parse, the 65th is rejected at its column")
    func depth() throws {
        let parens64 = String(repeating: "(", count: 64) + "a" + String(repeating: ")", count: 64)
        #expect(try TagExpression.parse(parens64) == .tag("a"))
        let bangs64 = String(repeating: "!", count: 64) + "a"
        #expect(try TagExpression.parse(bangs64).evaluate([]) == false)

        for text in [
            String(repeating: "(", count: 65) + "a" + String(repeating: ")", count: 65),
            String(repeating: "!", count: 65) + "a",
            String(repeating: "!(", count: 33) + "a" + String(repeating: ")", count: 33),
        ] {
            let error = #expect(throws: TagExpressionError.self) { try TagExpression.parse(text) }
            #expect(error?.code == .tooDeep)
            #expect(error?.column == 65)
            #expect(error?.message == "nesting is deeper than 64 levels of '(' and '!'")
        }
        // Depth is nesting, not the number of parentheses.
        let wide = (0..<200).map { "(!t\($0))" }.joined(separator: " || ")
        #expect(try TagExpression.parse(wide).tagCount == 200)
    }

    @Test("custom depth")
    func customDepth() throws {
        let limits = TagExpressionLimits(maxDepth: 2)
        #expect(try TagExpression.parse("((a)) && !(b)", limits: limits).tagCount == 2)
        let error = #expect(throws: TagExpressionError.self) { try TagExpression.parse("a && !(!b)", limits: limits) }
        #expect(error?.code == .tooDeep)
        #expect(error?.column == 8)
    }

    @Test("length: counted in bytes, rejected before parsing")
    func length() throws {
        let limits = TagExpressionLimits(maxLength: 10)
        #expect(try TagExpression.parse("a || b ||c", limits: limits).tagCount == 3)
        let error = #expect(throws: TagExpressionError.self) { try TagExpression.parse("a || b || c", limits: limits) }
        #expect(error?.code == .tooLong)
        #expect(error?.column == 11)
        #expect(error?.message == "expression is 11 bytes long; at most 10 are allowed")

        let huge = Self.chain(3_000, " || ")
        let defaultError = #expect(throws: TagExpressionError.self) { try TagExpression.parse(huge) }
        #expect(defaultError?.code == .tooLong)
        #expect(defaultError?.column == 16_385)
    }

    @Test("tag length: 120 by default, configurable")
    func tagLength() throws {
        let longest = String(repeating: "x", count: 120)
        #expect(try TagExpression.parse("a || \(longest)") == .or([.tag("a"), .tag(longest)]))
        let limits = TagExpressionLimits(maxTagLength: 5)
        #expect(try TagExpression.parse("abcde", limits: limits) == .tag("abcde"))
        let error = #expect(throws: TagExpressionError.self) { try TagExpression.parse("a && abcdef", limits: limits) }
        #expect(error?.code == .tagTooLong)
        #expect(error?.column == 6)
        #expect(error?.message == "tag is 6 characters long; at most 5 are allowed")
    }
}

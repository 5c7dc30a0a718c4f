import HeraldDomain
import Testing

/// Valid expressions: the canonical form each parses to, and which tag sets they select.
@Suite("Tag expressions: parsing and evaluation")
struct TagExpressionParsingTests {
    struct Canonical: CustomTestStringConvertible, Sendable {
        var input: String
        var canonical: String
        var testDescription: String { input.debugDescription }
    }

    static let canonicalForms: [Canonical] = [
        // Azure "Routing and tag expressions": single tags and the Red Sox example.
        .init(input: "Beatles", canonical: "Beatles"),
        .init(input: "Wailers", canonical: "Wailers"),
        .init(input: "user_Alice", canonical: "user_Alice"),
        .init(
            input: "(follows_RedSox || follows_Cardinals) && location_Boston",
            canonical: "(follows_RedSox || follows_Cardinals) && location_Boston"),
        // Seeds: the six breaking-news categories, and the notify-users username tag.
        .init(
            input: "World || Politics || Business || Technology || Science || Sports",
            canonical: "World || Politics || Business || Technology || Science || Sports"),
        .init(input: "(World||Politics)&&!Sports", canonical: "(World || Politics) && !Sports"),
        .init(input: "username:alice", canonical: "username:alice"),
        // Precedence: ! binds tighter than &&, which binds tighter than ||.
        .init(input: "a || b && c", canonical: "a || b && c"),
        .init(input: "a && b || c", canonical: "a && b || c"),
        .init(input: "(a || b) && c", canonical: "(a || b) && c"),
        .init(input: "a && (b || c)", canonical: "a && (b || c)"),
        .init(input: "!a && b", canonical: "!a && b"),
        .init(input: "!(a && b)", canonical: "!(a && b)"),
        .init(input: "!(a || b) || c", canonical: "!(a || b) || c"),
        .init(input: "!!a", canonical: "!!a"),
        .init(input: "! ! a", canonical: "!!a"),
        // Redundant parentheses disappear; chains flatten across parentheses.
        .init(input: "((a))", canonical: "a"),
        .init(input: "(a && b)", canonical: "a && b"),
        .init(input: "a && (b && c)", canonical: "a && b && c"),
        .init(input: "(a || b) || (c || d)", canonical: "a || b || c || d"),
        .init(input: "(a && b) || (c && d)", canonical: "a && b || c && d"),
        .init(input: "!(!a)", canonical: "!!a"),
        // Whitespace-insensitive: none, lots, tabs and newlines.
        .init(input: "a&&b", canonical: "a && b"),
        .init(input: "  a   &&\tb \n|| \r\n c  ", canonical: "a && b || c"),
        .init(input: "\t( a )\n", canonical: "a"),
        // The whole tag alphabet.
        .init(input: "Az09_@#.:-", canonical: "Az09_@#.:-"),
        .init(input: "lang:en-US && v2.5.0", canonical: "lang:en-US && v2.5.0"),
        .init(input: "#hashtag || @mention", canonical: "#hashtag || @mention"),
        // System tags.
        .init(
            input: "$InstallationId:{2b8c4d7e-0f1a-4b2c-9d3e-5f6a7b8c9d0e}",
            canonical: "$InstallationId:{2b8c4d7e-0f1a-4b2c-9d3e-5f6a7b8c9d0e}"),
        .init(input: "$UserId:{alice+news@example.com}&&!Sports", canonical: "$UserId:{alice+news@example.com} && !Sports"),
        .init(input: "($UserId:{bob}||$UserId:{a/b=c~d%20})", canonical: "$UserId:{bob} || $UserId:{a/b=c~d%20}"),
    ]

    @Test("canonical form", arguments: canonicalForms)
    func canonicalForm(_ example: Canonical) throws {
        let expression = try TagExpression.parse(example.input)
        #expect(expression.description == example.canonical)
        #expect(try TagExpression.parse(expression.description) == expression)
    }

    @Test("trees have the documented shape")
    func treeShape() throws {
        #expect(try TagExpression.parse("a || b && c") == .or([.tag("a"), .and([.tag("b"), .tag("c")])]))
        #expect(try TagExpression.parse("!a && b") == .and([.not(.tag("a")), .tag("b")]))
        #expect(try TagExpression.parse("!(a && b)") == .not(.and([.tag("a"), .tag("b")])))
        #expect(try TagExpression.parse("(a && b) && (c && d)") == .and([.tag("a"), .tag("b"), .tag("c"), .tag("d")]))
        #expect(try TagExpression.parse("a || (b || c)") == .or([.tag("a"), .tag("b"), .tag("c")]))
        #expect(try TagExpression.parse("!!a") == .not(.not(.tag("a"))))
        #expect(
            try TagExpression.parse("(follows_RedSox || follows_Cardinals) && location_Boston")
                == .and([.or([.tag("follows_RedSox"), .tag("follows_Cardinals")]), .tag("location_Boston")]))
    }

    struct Selection: CustomTestStringConvertible, Sendable {
        var expression: String
        var tags: Set<String>
        var selected: Bool
        var testDescription: String { "\(expression) on \(tags.sorted())" }
    }

    static let selections: [Selection] = [
        .init(expression: "Beatles", tags: ["Beatles"], selected: true),
        .init(expression: "Beatles", tags: ["Wailers"], selected: false),
        .init(expression: "Beatles", tags: [], selected: false),
        .init(expression: "Beatles", tags: ["beatles"], selected: false),  // tags are case-sensitive
        .init(
            expression: "(follows_RedSox || follows_Cardinals) && location_Boston", tags: ["follows_RedSox", "location_Boston"],
            selected: true),
        .init(
            expression: "(follows_RedSox || follows_Cardinals) && location_Boston", tags: ["follows_Cardinals", "location_Boston"],
            selected: true),
        .init(
            expression: "(follows_RedSox || follows_Cardinals) && location_Boston", tags: ["follows_RedSox", "follows_Cardinals"],
            selected: false),
        .init(expression: "(follows_RedSox || follows_Cardinals) && location_Boston", tags: ["location_Boston"], selected: false),
        .init(
            expression: "(follows_RedSox || follows_Cardinals) && location_Boston", tags: ["location_Boston", "follows_Yankees"],
            selected: false),
        .init(expression: "World", tags: ["World", "Politics", "Sports"], selected: true),
        .init(expression: "Technology", tags: ["World", "Politics", "Sports"], selected: false),
        .init(expression: "World || Politics || Business || Technology || Science || Sports", tags: ["Science"], selected: true),
        .init(expression: "World || Politics || Business || Technology || Science || Sports", tags: ["Weather"], selected: false),
        .init(expression: "(World || Politics) && !Sports", tags: ["Politics"], selected: true),
        .init(expression: "(World || Politics) && !Sports", tags: ["Politics", "Sports"], selected: false),
        .init(expression: "!Sports", tags: [], selected: true),
        .init(expression: "!Sports", tags: ["World"], selected: true),
        .init(expression: "!Sports", tags: ["Sports"], selected: false),
        .init(expression: "a || b && c", tags: ["a"], selected: true),
        .init(expression: "a || b && c", tags: ["b"], selected: false),
        .init(expression: "a || b && c", tags: ["b", "c"], selected: true),
        .init(expression: "(a || b) && c", tags: ["a"], selected: false),
        .init(expression: "!a && b", tags: ["b"], selected: true),
        .init(expression: "!a && b", tags: ["a", "b"], selected: false),
        .init(expression: "!(a && b)", tags: ["a"], selected: true),
        .init(expression: "!(a && b)", tags: ["a", "b"], selected: false),
        .init(expression: "!!a", tags: ["a"], selected: true),
        .init(expression: "username:alice", tags: ["username:alice"], selected: true),
        .init(expression: "$UserId:{alice@example.com}", tags: ["$UserId:{alice@example.com}"], selected: true),
        .init(expression: "$UserId:{alice@example.com}", tags: ["$UserId:{bob@example.com}"], selected: false),
        .init(expression: "$InstallationId:{42} || $UserId:{bob}", tags: ["$InstallationId:{42}"], selected: true),
    ]

    @Test("selects registrations", arguments: selections)
    func selects(_ example: Selection) throws {
        let expression = try TagExpression.parse(example.expression)
        #expect(expression.evaluate(example.tags) == example.selected)
        #expect(expression.evaluate(contains: { example.tags.contains($0) }) == example.selected)
    }

    @Test("builders flatten like the parser")
    func builders() throws {
        let a = TagExpression.tag("a")
        let b = TagExpression.tag("b")
        let c = TagExpression.tag("c")
        #expect(((a && b) && c) == .and([a, b, c]))
        #expect((a || (b || c)) == .or([a, b, c]))
        #expect(!(a || b) == .not(.or([a, b])))
        #expect(try TagExpression.parse("!(a || b) && c") == (!(a || b) && c))
        #expect(TagExpression.and([.and([a, b]), .or([.or([a, c])])]).normalized() == .and([a, b, .or([a, c])]))
        #expect(TagExpression.or([a]).normalized() == a)
    }

    @Test("a hand-built nested or prints with parentheses so meaning is kept")
    func nestedOrPrinting() throws {
        let nested = TagExpression.or([.or([.tag("a"), .tag("b")]), .tag("c")])
        #expect(nested.description == "(a || b) || c")
        #expect(try TagExpression.parse(nested.description) == nested.normalized())
    }

    @Test("OR-lists of tags (the event's array form)")
    func anyOf() throws {
        #expect(try TagExpression.anyOf(["World"]) == .tag("World"))
        #expect(
            try TagExpression.anyOf(["World", "Science", "World", "$UserId:{alice}"]).description
                == "World || Science || $UserId:{alice}")
        #expect(throws: TagExpressionError.self) { try TagExpression.anyOf([]) }
        let invalid = #expect(throws: TagExpressionError.self) { try TagExpression.anyOf(["World", "a||b"]) }
        #expect(invalid?.code == .invalidTag)
        #expect(invalid?.column == 2)
        let tooMany = #expect(throws: TagExpressionError.self) {
            try TagExpression.anyOf((0..<21).map { "t\($0)" }, limits: .azure)
        }
        #expect(tooMany?.code == .tooManyTags)
        #expect(tooMany?.column == 21)
        #expect(tooMany?.input == "t20")
        // Repeats do not count against the limit.
        #expect(try TagExpression.anyOf((0..<40).map { "t\($0 % 20)" }, limits: .azure).tagCount == 20)
        #expect(try TagExpression.anyOf((0..<20).map { "t\($0)" }, limits: .azure).tagCount == 20)
    }
}

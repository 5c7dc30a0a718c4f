import HeraldDomain
import Testing

@Suite("Tag expressions: analysis for the planner")
struct TagExpressionAnalysisTests {
    struct Facts: CustomTestStringConvertible, Sendable {
        var expression: String
        var tags: Set<String>
        var orOnly: Bool
        var matchesWithoutTags: Bool
        var testDescription: String { expression }
    }

    static let facts: [Facts] = [
        .init(expression: "Sports", tags: ["Sports"], orOnly: true, matchesWithoutTags: false),
        .init(
            expression: "World || Politics || Business || Technology || Science || Sports",
            tags: ["World", "Politics", "Business", "Technology", "Science", "Sports"], orOnly: true, matchesWithoutTags: false),
        .init(
            expression: "(follows_RedSox || follows_Cardinals) && location_Boston",
            tags: ["follows_RedSox", "follows_Cardinals", "location_Boston"], orOnly: false, matchesWithoutTags: false),
        .init(expression: "!Sports", tags: ["Sports"], orOnly: false, matchesWithoutTags: true),
        .init(
            expression: "(World || Politics) && !Sports", tags: ["World", "Politics", "Sports"], orOnly: false, matchesWithoutTags: false),
        .init(expression: "!a || b", tags: ["a", "b"], orOnly: false, matchesWithoutTags: true),
        .init(expression: "!(a && b)", tags: ["a", "b"], orOnly: false, matchesWithoutTags: true),
        .init(expression: "!!a", tags: ["a"], orOnly: false, matchesWithoutTags: false),
        .init(expression: "a && b", tags: ["a", "b"], orOnly: false, matchesWithoutTags: false),
        .init(expression: "a || a", tags: ["a"], orOnly: true, matchesWithoutTags: false),
        .init(expression: "((a || b))", tags: ["a", "b"], orOnly: true, matchesWithoutTags: false),
        .init(expression: "a || b && c", tags: ["a", "b", "c"], orOnly: false, matchesWithoutTags: false),
        .init(
            expression: "$UserId:{alice} || $UserId:{bob}", tags: ["$UserId:{alice}", "$UserId:{bob}"], orOnly: true,
            matchesWithoutTags: false),
    ]

    @Test("referenced tags, OR-only, matches without tags", arguments: facts)
    func analysis(_ example: Facts) throws {
        let expression = try TagExpression.parse(example.expression)
        #expect(expression.referencedTags == example.tags)
        #expect(expression.isOrOnly == example.orOnly)
        #expect(expression.matchesWithoutTags == example.matchesWithoutTags)
        #expect((expression.orOnlyTags != nil) == example.orOnly)
    }

    @Test("OR-only tags keep their order and drop repeats")
    func orOnlyTags() throws {
        #expect(try TagExpression.parse("b || a || b").orOnlyTags == ["b", "a"])
        #expect(try TagExpression.parse("x").orOnlyTags == ["x"])
        #expect(try TagExpression.parse("x && y").orOnlyTags == nil)
    }

    @Test("tag count counts occurrences")
    func tagCount() throws {
        #expect(try TagExpression.parse("a || a && !a").tagCount == 3)
        #expect(try TagExpression.parse("a || a && !a").referencedTags == ["a"])
    }
}

@Suite("Tag rules")
struct TagExpressionTagRulesTests {
    static let valid: [String] = [
        "World", "a", "7", String(repeating: "x", count: 120),
        "follows_RedSox", "location_Boston", "username:alice", "lang:en-US", "v2.5.0", "#news", "@alice",
        "Az09_@#.:-",
        "$InstallationId:{2b8c4d7e-0f1a-4b2c-9d3e-5f6a7b8c9d0e}",
        "$UserId:{alice}", "$UserId:{alice+news@example.com}", "$UserId:{a/b=c~d%20}",
        "$UserId:{" + String(repeating: "u", count: 110) + "}",  // exactly 120 in all
    ]

    @Test("valid tags", arguments: valid)
    func validTag(_ tag: String) throws {
        #expect(TagRules.problem(with: tag) == nil)
        // Every valid tag is also a one-tag expression.
        #expect(try TagExpression.parse(tag) == .tag(tag))
    }

    struct Invalid: CustomTestStringConvertible, Sendable {
        var tag: String
        var problem: String
        var testDescription: String { tag.debugDescription }
    }

    static let invalid: [Invalid] = [
        .init(tag: "", problem: "tag is empty"),
        .init(tag: String(repeating: "x", count: 121), problem: "tag is 121 characters long; at most 120 are allowed"),
        .init(
            tag: "breaking news",
            problem:
                "character U+0020 at position 9 is not allowed in a tag (allowed: A-Z a-z 0-9 _ @ # . : -, or a system tag $InstallationId:{id} / $UserId:{id})"
        ),
        .init(
            tag: "café",
            problem:
                "character 'é' at position 4 is not allowed in a tag (allowed: A-Z a-z 0-9 _ @ # . : -, or a system tag $InstallationId:{id} / $UserId:{id})"
        ),
        .init(
            tag: "a||b",
            problem:
                "character '|' at position 2 is not allowed in a tag (allowed: A-Z a-z 0-9 _ @ # . : -, or a system tag $InstallationId:{id} / $UserId:{id})"
        ),
        .init(
            tag: "a,b",
            problem:
                "character ',' at position 2 is not allowed in a tag (allowed: A-Z a-z 0-9 _ @ # . : -, or a system tag $InstallationId:{id} / $UserId:{id})"
        ),
        .init(
            tag: "a$",
            problem:
                "character '$' at position 2 is not allowed in a tag (allowed: A-Z a-z 0-9 _ @ # . : -, or a system tag $InstallationId:{id} / $UserId:{id})"
        ),
        .init(
            tag: "$Foo",
            problem:
                "'$' may only begin a system tag, $InstallationId:{id}, $UserId:{id}, $TimeZone:{zone}, $QuietHours:{hours} or $FrequencyCap:{n} (at position 1)"
        ),
        .init(tag: "$UserId:{}", problem: "system tag has an empty id (at position 10)"),
        .init(tag: "$UserId:{alice", problem: "system tag is missing its closing '}' (at position 15)"),
        .init(
            tag: "$UserId:{a b}",
            problem: "character U+0020 is not allowed in a system tag id (allowed: A-Z a-z 0-9 _ @ # . : - + = / ~ %) (at position 11)"),
        .init(tag: "$UserId:{alice}x", problem: "unexpected text after the system tag at position 16"),
    ]

    @Test("invalid tags", arguments: invalid)
    func invalidTag(_ example: Invalid) {
        #expect(TagRules.problem(with: example.tag) == example.problem)
        #expect(!TagRules.isSystemTag(example.tag))
    }

    @Test("system tags")
    func systemTags() {
        #expect(TagRules.isSystemTag("$UserId:{alice}"))
        #expect(TagRules.isSystemTag("$InstallationId:{42}"))
        #expect(!TagRules.isSystemTag("UserId:alice"))
        #expect(!TagRules.isSystemTag("$UserId:{}"))
        #expect(TagRules.userIdTag("alice@example.com") == "$UserId:{alice@example.com}")
        #expect(TagRules.installationIdTag("42") == "$InstallationId:{42}")
        #expect(TagRules.isSystemTag(TagRules.installationIdTag("2b8c4d7e-0f1a")))
        #expect(TagRules.maxLength == 120)
    }
}

import HeraldDomain
import Testing

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
        .init(tag: "$Foo", problem: "'$' may only begin a system tag, $InstallationId:{id} or $UserId:{id} (at position 1)"),
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

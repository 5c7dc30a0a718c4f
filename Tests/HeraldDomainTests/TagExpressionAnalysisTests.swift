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

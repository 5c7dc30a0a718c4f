import HeraldDomain
import Testing

@Suite("Tag set plans")
struct TagSetPlanTests {
    typealias Step = TagSetPlan.Step

    struct Shape: CustomTestStringConvertible, Sendable {
        var expression: String
        var steps: [Step]
        var result: TagSetPlan.Operand
        var testDescription: String { expression }
    }

    static let shapes: [Shape] = [
        .init(expression: "Sports", steps: [], result: .tag("Sports")),
        .init(expression: "a || a", steps: [], result: .tag("a")),
        .init(expression: "!!a", steps: [], result: .tag("a")),
        .init(expression: "a || b", steps: [.union(into: 0, [.tag("a"), .tag("b")])], result: .temporary(0)),
        .init(expression: "a && b", steps: [.intersection(into: 0, [.tag("a"), .tag("b")])], result: .temporary(0)),
        // NOT becomes a difference, never a complement.
        .init(expression: "a && !b", steps: [.difference(into: 0, .tag("a"), minus: [.tag("b")])], result: .temporary(0)),
        .init(expression: "!a", steps: [.difference(into: 0, .all, minus: [.tag("a")])], result: .temporary(0)),
        .init(expression: "!(a || b)", steps: [.difference(into: 0, .all, minus: [.tag("a"), .tag("b")])], result: .temporary(0)),
        // De Morgan: !a && !b is the same single step.
        .init(expression: "!a && !b", steps: [.difference(into: 0, .all, minus: [.tag("a"), .tag("b")])], result: .temporary(0)),
        // Intersections before differences, all subtrahends in one SDIFFSTORE.
        .init(
            expression: "a && !c && b && !d",
            steps: [
                .intersection(into: 0, [.tag("a"), .tag("b")]),
                .difference(into: 1, .temporary(0), minus: [.tag("c"), .tag("d")]),
            ], result: .temporary(1)),
        .init(
            expression: "a && !(c || d)", steps: [.difference(into: 0, .tag("a"), minus: [.tag("c"), .tag("d")])], result: .temporary(0)),
        .init(
            expression: "(a && !b) && c",
            steps: [
                .intersection(into: 0, [.tag("a"), .tag("c")]),
                .difference(into: 1, .temporary(0), minus: [.tag("b")]),
            ], result: .temporary(1)),
        .init(
            expression: "a && !(b && c)",
            steps: [
                .intersection(into: 0, [.tag("b"), .tag("c")]),
                .difference(into: 1, .tag("a"), minus: [.temporary(0)]),
            ], result: .temporary(1)),
        .init(
            expression: "(follows_RedSox || follows_Cardinals) && location_Boston",
            steps: [
                .union(into: 0, [.tag("follows_RedSox"), .tag("follows_Cardinals")]),
                .intersection(into: 1, [.temporary(0), .tag("location_Boston")]),
            ], result: .temporary(1)),
        .init(
            expression: "(World || Politics) && !Sports",
            steps: [
                .union(into: 0, [.tag("World"), .tag("Politics")]),
                .difference(into: 1, .temporary(0), minus: [.tag("Sports")]),
            ], result: .temporary(1)),
        .init(
            expression: "World || Politics || Business || Technology || Science || Sports",
            steps: [
                .union(into: 0, ["World", "Politics", "Business", "Technology", "Science", "Sports"].map { .tag($0) })
            ], result: .temporary(0)),
        // a || b && c: the intersection is written, then united.
        .init(
            expression: "a || b && c",
            steps: [
                .intersection(into: 0, [.tag("b"), .tag("c")]),
                .union(into: 1, [.tag("a"), .temporary(0)]),
            ], result: .temporary(1)),
        // !a || b = all - (a - b): `all` only in the last step.
        .init(
            expression: "!a || b",
            steps: [
                .difference(into: 0, .tag("a"), minus: [.tag("b")]),
                .difference(into: 1, .all, minus: [.temporary(0)]),
            ], result: .temporary(1)),
        .init(
            expression: "!a || !b",
            steps: [
                .intersection(into: 0, [.tag("a"), .tag("b")]),
                .difference(into: 1, .all, minus: [.temporary(0)]),
            ], result: .temporary(1)),
    ]

    @Test("plan shapes", arguments: shapes)
    func shape(_ example: Shape) throws {
        let plan = try TagExpression.parse(example.expression).setPlan()
        #expect(plan.steps == example.steps)
        #expect(plan.result == example.result)
        #expect(plan.temporaryCount == example.steps.count)
    }

    @Test(
        "reads `all` exactly when the expression matches registrations without its tags",
        arguments: shapes.map(\.expression))
    func readsAll(_ text: String) throws {
        let expression = try TagExpression.parse(text)
        #expect(expression.setPlan().readsAll == expression.matchesWithoutTags)
    }

    @Test("in-memory execution on a small newsroom population")
    func execute() throws {
        let registrations: [String: Set<String>] = [
            "r1": ["World", "Politics"],
            "r2": ["Sports"],
            "r3": ["Politics", "Sports"],
            "r4": [],
            "r5": ["Science", "$UserId:{alice}"],
        ]
        let sets: (String) -> Set<String> = { tag in Set(registrations.filter { $0.value.contains(tag) }.keys) }
        let all = Set(registrations.keys)
        let cases: [(String, Set<String>)] = [
            ("(World || Politics) && !Sports", ["r1"]),
            ("!Sports", ["r1", "r4", "r5"]),
            ("$UserId:{alice}", ["r5"]),
            ("Sports", ["r2", "r3"]),
            ("!(World || Sports || Science)", ["r4"]),
        ]
        for (text, expected) in cases {
            #expect(try TagExpression.parse(text).setPlan().execute(sets: sets, all: all) == expected, "\(text)")
        }
    }

    @Test("description reads as Redis commands")
    func description() throws {
        let plan = try TagExpression.parse("!a || b && c").setPlan()
        #expect(
            plan.description == """
                t0 = SINTER b c
                t1 = SDIFF a t0
                t2 = SDIFF *all* t1
                result t2
                """)
        #expect(try TagExpression.parse("Sports").setPlan().description == "result Sports")
    }
}

import HeraldDomain
import PropertyBased
import Testing

@Suite("Tag expressions: properties")
struct TagExpressionPropertyTests {
    static let recipes = Gen.int(in: 0...1_000_000).array(of: 1...60)
    static let allAssignments = (0..<(1 << TagExpressionRecipe.alphabet.count)).map(TagExpressionRecipe.tags)

    @Test("evaluation equals the truth table of the expression as written")
    func evaluationMatchesTruthTable() async {
        await propertyCheck(count: 300, input: Self.recipes) { choices throws in
            var recipe = TagExpressionRecipe(choices)
            let tree = recipe.expression()
            let text = recipe.text(for: tree)
            guard let parsed = try? TagExpression.parse(text) else {
                Issue.record("did not parse: \(text.debugDescription)")
                return
            }
            for tags in Self.allAssignments {
                let expected = TagExpressionRecipe.truth(tree, tags)
                if parsed.evaluate(tags) != expected || parsed.evaluate(contains: { tags.contains($0) }) != expected {
                    Issue.record("\(text.debugDescription) on \(tags.sorted()) should be \(expected)")
                    return
                }
            }
        }
    }

    @Test("the compiled matcher agrees with evaluation on every tag combination, with unrelated tags beside")
    func matcherMatchesEvaluation() async {
        await propertyCheck(count: 300, input: Self.recipes) { choices throws in
            var recipe = TagExpressionRecipe(choices)
            let expression = recipe.expression()
            let matcher = TagMatcher(expression)
            for tags in Self.allAssignments {
                let held = tags.sorted() + ["Unrelated", "$UserId:{x}"]
                if matcher.matches(held) != expression.evaluate(tags) {
                    Issue.record("\(expression) on \(held) should be \(expression.evaluate(tags))")
                    return
                }
            }
        }
    }

    @Test("bitmaps evaluated 64 registrations at a time select what evaluation selects, live ones only")
    func wordsMatchEvaluation() async {
        await propertyCheck(count: 200, input: Self.recipes) { choices throws in
            var recipe = TagExpressionRecipe(choices)
            let expression = recipe.expression()
            let matcher = TagMatcher(expression)
            // Registration `n` holds assignment `n % assignments`; every fifth is not live,
            // and the tag bitmaps are one word shorter than `live` (trailing zero words).
            let assignments = Self.allAssignments
            let count = 64 * 5
            var live = [UInt64](repeating: 0, count: count / 64)
            var tagWords = matcher.tags.map { _ in [UInt64](repeating: 0, count: count / 64 - 1) }
            for registration in 0..<count {
                let bit = UInt64(1) << UInt64(63 - registration % 64)
                if registration % 5 != 0 { live[registration / 64] |= bit }
                guard registration / 64 < count / 64 - 1 else { continue }
                for (number, tag) in matcher.tags.enumerated() where assignments[registration % assignments.count].contains(tag) {
                    tagWords[number][registration / 64] |= bit
                }
            }
            let words = matcher.matchingWords(live: live, tagWords: tagWords)
            for registration in 0..<count {
                let selected = words[registration / 64] & (UInt64(1) << UInt64(63 - registration % 64)) != 0
                let tags = registration / 64 < count / 64 - 1 ? assignments[registration % assignments.count] : []
                let expected = registration % 5 != 0 && expression.evaluate(tags)
                if selected != expected {
                    Issue.record("\(expression): registration \(registration) holding \(tags.sorted()) should be \(expected)")
                    return
                }
            }
        }
    }

    @Test("the estimates the fan-out chooses plans by: audience share and the set plan's reads")
    func estimates() throws {
        let sizes = ["World": 300, "Politics": 300, "Sports": 300, "$UserId:{a}": 1]
        let count: (String) -> Int = { sizes[$0] ?? 0 }
        let wide = try TagExpression.parse("(World || Politics) && !Sports")
        #expect(abs(wide.estimatedShare(registrations: 900, count: count) - (1 - 4.0 / 9) * 2 / 3) < 1e-9)
        // A union of two thirds, then a difference from it: more reads than registrations.
        #expect(wide.setPlan().estimatedReads(registrations: 900, count: count) > 900)
        let one = try TagExpression.parse("$UserId:{a}")
        #expect(one.setPlan().estimatedReads(registrations: 900, count: count) == 1)
        #expect(one.estimatedShare(registrations: 900, count: count) == 1.0 / 900)
        let pair = try TagExpression.parse("World && Politics")
        // The smallest operand once per operand, then the result (a ninth).
        #expect(abs(pair.setPlan().estimatedReads(registrations: 900, count: count) - (600 + 100)) < 1e-9)
        #expect(pair.estimatedShare(registrations: 0, count: count) == 0)
    }

    @Test("past the truth table's size the matcher evaluates the expression itself")
    func wideMatcherMatchesEvaluation() throws {
        // 20 distinct tags: (t0 && !t1) || (t2 && !t3) || ... || (t18 && !t19).
        let text = (0..<10).map { "(t\($0 * 2) && !t\($0 * 2 + 1))" }.joined(separator: " || ")
        let expression = try TagExpression.parse(text)
        let matcher = TagMatcher(expression)
        #expect(matcher.tags.count == 20)
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let tags = Set((0..<20).filter { _ in Bool.random(using: &generator) }.map { "t\($0)" })
            #expect(matcher.matches(tags.sorted()) == expression.evaluate(tags), "\(tags.sorted())")
        }
        #expect(!matcher.matches([String]()))
        #expect(matcher.matches(["t0"]))
        #expect(!matcher.matches(["t0", "t1"]))
        // A tag that only starts like an expression tag is another tag.
        #expect(!matcher.matches(["t0x"]))
    }

    @Test("parsing any way of writing an expression gives the same tree; print/parse round-trips")
    func roundTrip() async {
        await propertyCheck(count: 300, input: Self.recipes) { choices throws in
            var recipe = TagExpressionRecipe(choices)
            let tree = recipe.expression()
            let text = recipe.text(for: tree)
            #expect(try TagExpression.parse(text) == tree, "\(text.debugDescription)")
            #expect(try TagExpression.parse(tree.description) == tree)
            #expect(try TagExpression.parse(tree.description).description == tree.description)
        }
    }

    @Test("the set plan selects exactly the registrations evaluation selects")
    func setPlanMatchesEvaluation() async {
        let populations = Gen.int(in: 0...255).array(of: 0...40)
        await propertyCheck(count: 300, input: Self.recipes, populations) { choices, masks in
            var recipe = TagExpressionRecipe(choices)
            let expression = recipe.expression()
            let registrations = masks.enumerated().map { ("r\($0.offset)", TagExpressionRecipe.tags($0.element)) }
            let all = Set(registrations.map(\.0))
            let expected = Set(registrations.filter { expression.evaluate($0.1) }.map(\.0))
            let plan = expression.setPlan()
            let actual = plan.execute(
                sets: { tag in Set(registrations.filter { $0.1.contains(tag) }.map(\.0)) },
                all: all)
            #expect(actual == expected, "\(expression)\n\(plan)")
            #expect(plan.readsAll == expression.matchesWithoutTags, "\(expression)")
        }
    }

    @Test("set plans are well-formed: each step writes the next temporary from earlier ones; `all` only last")
    func setPlanShape() async {
        await propertyCheck(count: 300, input: Self.recipes) { choices throws in
            var recipe = TagExpressionRecipe(choices)
            let expression = recipe.expression()
            let plan = expression.setPlan()
            #expect(plan.temporaryCount == plan.steps.count)
            for (index, step) in plan.steps.enumerated() {
                #expect(step.destination == index)
                #expect(step.sources.count >= 1)
                for source in step.sources {
                    switch source {
                    case .temporary(let earlier): #expect(earlier < index)
                    case .all: #expect(index == plan.steps.count - 1, "\(expression)")
                    case .tag(let tag): #expect(expression.referencedTags.contains(tag))
                    }
                }
            }
            if plan.steps.isEmpty {
                guard case .tag = plan.result else {
                    Issue.record("a plan without steps must answer with a tag set: \(expression)")
                    return
                }
            } else {
                #expect(plan.result == .temporary(plan.steps.count - 1))
            }
        }
    }

    @Test("analysis agrees with the tree")
    func analysis() async {
        await propertyCheck(count: 300, input: Self.recipes) { choices throws in
            var recipe = TagExpressionRecipe(choices)
            let expression = recipe.expression()
            #expect(expression.matchesWithoutTags == TagExpressionRecipe.truth(expression, []))
            let referenced = expression.referencedTags
            #expect(referenced.isSubset(of: Set(TagExpressionRecipe.alphabet)))
            // Every referenced tag is in the canonical text, and no other alphabet tag is.
            let reparsed = try TagExpression.parse(expression.description)
            #expect(reparsed.referencedTags == referenced)
            if expression.isOrOnly {
                #expect(expression.evaluate(referenced) && !expression.evaluate([]))
            }
        }
    }

    /// Arbitrary strings over the characters that matter: the parser never crashes, and either
    /// accepts (then round-trips) or reports a column inside the input or just past its end.
    @Test("arbitrary input: accepted and round-trips, or rejected at a column within the input")
    func arbitraryInput() async {
        let pieces = [
            "a", "b", "World", " ", "\t", "(", ")", "!", "&&", "||", "&", "|", "$UserId:{", "}", "{",
            "$InstallationId:{x}", "$", ",", "é", "🎉", "\u{00A0}", ":", "-",
        ]
        let inputs = Gen.int(in: 0...(pieces.count - 1)).array(of: 0...30).map { $0.map { pieces[$0] }.joined() }
        await propertyCheck(count: 500, input: inputs) { text in
            do throws(TagExpressionError) {
                let expression = try TagExpression.parse(text)
                let reparsed = try TagExpression.parse(expression.description)
                #expect(reparsed == expression, "\(text.debugDescription)")
            } catch {
                #expect((1...(text.count + 1)).contains(error.column), "\(text.debugDescription): \(error)")
                #expect(!error.message.isEmpty)
                #expect(error.input == text)
            }
        }
    }
}

// libFuzzer entry point for the tag-expression parser. Compiled into the HeraldDomain module by
// scripts/fuzz (swiftc -sanitize=fuzzer,address -parse-as-library), so it is never part of a
// SwiftPM build. It uses only the public API, as an app or the CLI would.
//
// For every input that parses, it checks the properties the rest of Herald relies on:
// - every tag the parser accepted is a tag a registration may carry (TagRules);
// - the canonical form re-parses to the same tree, and printing is a fixed point;
// - the Azure-compatible limits only ever reject, never change, an expression;
// - both evaluation entry points agree, and `matchesWithoutTags` is evaluation on no tags;
// - the Redis set plan is well formed and, run over a small population of registrations,
//   selects exactly the registrations that evaluation selects.
// A violated property calls `fatalError`, which libFuzzer records as a crash with the input.

import HeraldDomain

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `HERALD_FUZZ_VERBOSE=1` prints what each input parsed to, for reading a reproducer.
private let verbose = getenv("HERALD_FUZZ_VERBOSE") != nil

@_cdecl("LLVMFuzzerTestOneInput")
public func tagExpressionFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    let text = String(decoding: bytes, as: UTF8.self)
    TagExpressionFuzzCase(text: text).run()
    return 0
}

private struct TagExpressionFuzzCase {
    let text: String

    func run() {
        let expression: TagExpression
        do {
            expression = try TagExpression.parse(text)
        } catch {
            if verbose { trace("error[\(error.code)] \(error)") }
            checkError(error)
            checkAzureRejects()
            checkTagList()
            return
        }
        if verbose { trace("parsed: \(expression)\n\(expression.setPlan())") }
        checkTags(of: expression)
        checkRoundTrip(expression)
        checkAzureMode(expression)
        checkAnalysis(expression)
        checkPlan(expression)
        checkTagList()
    }

    /// An error's column lies inside the input or one past its end, and its text is usable.
    private func checkError(_ error: TagExpressionError) {
        let columns = text.count + 1
        require((1...columns).contains(error.column), "column \(error.column) outside 1...\(columns) for \(error.code)")
        require(!error.message.isEmpty, "empty message for \(error.code)")
        require(error.input == text, "error.input differs from the input")
        require(error.description.contains("at column \(error.column)"), "description lacks the column: \(error.description)")
        require(error.caret.count == error.column, "caret is \(error.caret.count) long for column \(error.column)")
    }

    /// Azure mode is stricter, never looser.
    private func checkAzureRejects() {
        if let accepted = try? TagExpression.parse(text, limits: .azure) {
            fail("Azure mode accepted what the default limits rejected: \(accepted)")
        }
    }

    private func checkTags(of expression: TagExpression) {
        for tag in expression.referencedTags {
            if let problem = TagRules.problem(with: tag) {
                fail("parser accepted tag \(tag.debugDescription) that TagRules rejects: \(problem)")
            }
        }
        require(expression.tagCount <= TagExpressionLimits.default.maxTags, "tag count \(expression.tagCount) above the limit")
    }

    private func checkRoundTrip(_ expression: TagExpression) {
        require(expression.normalized() == expression, "parse produced a non-normalized tree: \(expression)")
        let printed = expression.description
        // The canonical form spaces operators, so it can outgrow a compact input's length limit.
        var relaxed = TagExpressionLimits.default
        relaxed.maxLength = .max
        let reparsed: TagExpression
        do {
            reparsed = try TagExpression.parse(printed, limits: relaxed)
        } catch {
            fail("canonical form \(printed.debugDescription) does not parse: \(error)")
        }
        require(reparsed == expression, "round trip changed the tree: \(printed.debugDescription) reparsed as \(reparsed)")
        require(
            reparsed.description == printed,
            "printing is not a fixed point: \(printed.debugDescription) vs \(reparsed.description.debugDescription)")
    }

    private func checkAzureMode(_ expression: TagExpression) {
        let azure: TagExpression
        do {
            azure = try TagExpression.parse(text, limits: .azure)
        } catch {
            let allowed = expression.isOrOnly ? TagExpressionLimits.azureMaxTagsWhenOrOnly : TagExpressionLimits.azureMaxTagsOtherwise
            require(expression.tagCount > allowed, "Azure mode rejected \(expression.tagCount) tags (allowed \(allowed)): \(error)")
            require(error.code == .tooManyTags, "Azure mode rejected with \(error.code), expected tooManyTags")
            return
        }
        require(azure == expression, "Azure mode parsed a different tree")
        let allowed = azure.isOrOnly ? TagExpressionLimits.azureMaxTagsWhenOrOnly : TagExpressionLimits.azureMaxTagsOtherwise
        require(azure.tagCount <= allowed, "Azure mode accepted \(azure.tagCount) tags (allowed \(allowed))")
    }

    private func checkAnalysis(_ expression: TagExpression) {
        require(expression.matchesWithoutTags == expression.evaluate([]), "matchesWithoutTags disagrees with evaluate([])")
        if let tags = expression.orOnlyTags {
            require(expression.isOrOnly, "orOnlyTags without isOrOnly")
            require(Set(tags) == expression.referencedTags, "orOnlyTags \(tags) differ from referencedTags")
            require(tags.count == Set(tags).count, "orOnlyTags has repeats")
        } else {
            require(!expression.isOrOnly, "isOrOnly without orOnlyTags")
        }
    }

    /// Runs the plan over a population that covers every combination of the first few tags,
    /// plus a registration carrying only an unrelated tag and one carrying every tag.
    private func checkPlan(_ expression: TagExpression) {
        let plan = expression.setPlan()
        checkShape(of: plan)
        if plan.readsAll {
            require(expression.matchesWithoutTags, "plan reads all registrations but the expression needs tags: \(expression)\n\(plan)")
        }

        let tags = expression.referencedTags.sorted()
        let combinatorial = Array(tags.prefix(8))
        var population: [String: Set<String>] = [:]
        for mask in 0..<(1 << combinatorial.count) {
            var carried: Set<String> = []
            for (bit, tag) in combinatorial.enumerated() where mask & (1 << bit) != 0 { carried.insert(tag) }
            population["r\(mask)"] = carried
        }
        population["unrelated"] = ["herald-fuzz-unrelated"]
        population["everything"] = Set(tags)

        var members: [String: Set<String>] = [:]
        for (registration, carried) in population {
            for tag in carried { members[tag, default: []].insert(registration) }
        }
        let all = Set(population.keys)
        let planned = plan.execute(sets: { members[$0] ?? [] }, all: all)
        var evaluated: Set<String> = []
        for (registration, carried) in population {
            let bySet = expression.evaluate(carried)
            let byClosure = expression.evaluate(contains: { carried.contains($0) })
            require(bySet == byClosure, "evaluate(Set) and evaluate(contains:) disagree on \(carried.sorted())")
            if bySet { evaluated.insert(registration) }
        }
        if planned != evaluated {
            let extra = planned.subtracting(evaluated).sorted().map { "\($0)=\(population[$0]!.sorted())" }
            let missing = evaluated.subtracting(planned).sorted().map { "\($0)=\(population[$0]!.sorted())" }
            fail("plan differs from evaluation for \(expression)\n\(plan)\nextra: \(extra)\nmissing: \(missing)")
        }
    }

    /// Steps write temporaries 0, 1, ... in order and read only tags, `all` or earlier temporaries.
    private func checkShape(of plan: TagSetPlan) {
        require(plan.temporaryCount == plan.steps.count, "temporaryCount \(plan.temporaryCount) for \(plan.steps.count) steps")
        for (index, step) in plan.steps.enumerated() {
            require(step.destination == index, "step \(index) writes t\(step.destination)")
            let sources = step.sources
            require(!sources.isEmpty, "step \(index) has no operands")
            for case .temporary(let read) in sources {
                require(read < index, "step \(index) reads t\(read) before it is written")
            }
        }
        if case .temporary(let read) = plan.result {
            require(read < plan.steps.count, "result reads t\(read), never written")
        }
    }

    /// The same input split on commas, as an event's `"tags": [...]` list.
    private func checkTagList() {
        let tags = text.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        guard let expression = try? TagExpression.anyOf(tags) else { return }
        require(expression.isOrOnly, "anyOf gave a non-OR expression")
        require(expression.referencedTags == Set(tags), "anyOf lost or invented tags")
        for tag in tags {
            require(TagRules.problem(with: tag) == nil, "anyOf accepted invalid tag \(tag.debugDescription)")
            require(expression.evaluate([tag]), "anyOf does not match its own tag \(tag.debugDescription)")
        }
        require(!expression.evaluate(["herald-fuzz-unrelated"]) || tags.contains("herald-fuzz-unrelated"), "anyOf matches an unrelated tag")
    }
}

private func require(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
    if !condition() { fail(message()) }
}

private func fail(_ message: String) -> Never {
    fatalError("tag-expression fuzz property violated: \(message)")
}

/// Written to stderr unbuffered, so the trace survives the crash it is meant to explain.
private func trace(_ message: String) {
    var line = message + "\n"
    line.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
}

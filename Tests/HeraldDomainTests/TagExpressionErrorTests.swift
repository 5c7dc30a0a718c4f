import HeraldDomain
import Testing

/// Every way an expression can be malformed, with the exact code, column and message.
/// Columns are 1-based Characters; at the end of the input the column is one past the last
/// character (where the missing token belongs).
@Suite("Tag expressions: errors")
struct TagExpressionErrorTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var input: String
        var code: TagExpressionError.Code
        var column: Int
        var message: String
        var testDescription: String { input.debugDescription }
    }

    static let cases: [Case] = [
        .init(input: "", code: .empty, column: 1, message: "tag expression is empty"),
        .init(input: " \t\n ", code: .empty, column: 1, message: "tag expression is empty"),
        // The input ends where a tag or '(' is required.
        .init(input: "(World || ", code: .unexpectedEnd, column: 11, message: "expected tag or '('"),
        .init(input: "(World ||", code: .unexpectedEnd, column: 10, message: "expected tag or '('"),
        .init(input: "World &&", code: .unexpectedEnd, column: 9, message: "expected tag or '('"),
        .init(input: "!", code: .unexpectedEnd, column: 2, message: "expected tag or '('"),
        .init(input: "(", code: .unexpectedEnd, column: 2, message: "expected tag or '('"),
        // An operator or ')' where a tag or '(' is required.
        .init(input: "a && || b", code: .expectedTag, column: 6, message: "expected tag or '(' but found '||'"),
        .init(input: "|| a", code: .expectedTag, column: 1, message: "expected tag or '(' but found '||'"),
        .init(input: "&& a", code: .expectedTag, column: 1, message: "expected tag or '(' but found '&&'"),
        .init(input: "()", code: .expectedTag, column: 2, message: "expected tag or '(' but found ')'"),
        .init(input: "a || !)", code: .expectedTag, column: 7, message: "expected tag or '(' but found ')'"),
        .init(input: ")", code: .expectedTag, column: 1, message: "expected tag or '(' but found ')'"),
        // Parentheses.
        .init(input: "(a || b", code: .expectedClosingParen, column: 8, message: "expected ')'"),
        .init(input: "a && ((b || c)", code: .expectedClosingParen, column: 15, message: "expected ')'"),
        .init(input: "a || b)", code: .unmatchedClosingParen, column: 7, message: "')' has no matching '('"),
        .init(input: "(a))", code: .unmatchedClosingParen, column: 4, message: "')' has no matching '('"),
        // Two operands with no operator between them.
        .init(input: "a b", code: .expectedOperator, column: 3, message: "expected '&&' or '||' but found tag 'b'"),
        .init(input: "a !b", code: .expectedOperator, column: 3, message: "expected '&&' or '||' but found '!'"),
        .init(input: "a (b)", code: .expectedOperator, column: 3, message: "expected '&&' or '||' but found '('"),
        .init(input: "(a b)", code: .expectedOperator, column: 4, message: "expected '&&', '||' or ')' but found tag 'b'"),
        .init(input: "World!", code: .expectedOperator, column: 6, message: "expected '&&' or '||' but found '!'"),
        .init(input: "$UserId:{a}b", code: .expectedOperator, column: 12, message: "expected '&&' or '||' but found tag 'b'"),
        // Characters that start no token.
        .init(input: "a & b", code: .unexpectedCharacter, column: 3, message: "unexpected character '&'; use '&&' for AND"),
        .init(input: "a | b", code: .unexpectedCharacter, column: 3, message: "unexpected character '|'; use '||' for OR"),
        .init(input: "a ||| b", code: .unexpectedCharacter, column: 5, message: "unexpected character '|'; use '||' for OR"),
        .init(input: "a &", code: .unexpectedCharacter, column: 3, message: "unexpected character '&'; use '&&' for AND"),
        .init(input: "a, b", code: .unexpectedCharacter, column: 2, message: "unexpected character ','"),
        .init(input: "a && \"b\"", code: .unexpectedCharacter, column: 6, message: "unexpected character '\"'"),
        .init(input: "a && {b}", code: .unexpectedCharacter, column: 6, message: "unexpected character '{'"),
        .init(input: "Sports && Café", code: .unexpectedCharacter, column: 14, message: "unexpected character 'é'"),
        .init(input: "🎉 || a", code: .unexpectedCharacter, column: 1, message: "unexpected character '🎉'"),
        .init(input: "a\u{00A0}&& b", code: .unexpectedCharacter, column: 2, message: "unexpected character U+00A0"),
        .init(input: "a AND b", code: .expectedOperator, column: 3, message: "expected '&&' or '||' but found tag 'AND'"),
        // System tags and '$'.
        .init(
            input: "$Foo", code: .invalidTag, column: 1,
            message:
                "'$' may only begin a system tag, $InstallationId:{id}, $UserId:{id}, $TimeZone:{zone}, $QuietHours:{hours} or $FrequencyCap:{n}"
        ),
        .init(
            input: "abc$", code: .invalidTag, column: 4,
            message:
                "'$' may only begin a system tag, $InstallationId:{id}, $UserId:{id}, $TimeZone:{zone}, $QuietHours:{hours} or $FrequencyCap:{n}"
        ),
        .init(
            input: "$userid:{alice}", code: .invalidTag, column: 1,
            message:
                "'$' may only begin a system tag, $InstallationId:{id}, $UserId:{id}, $TimeZone:{zone}, $QuietHours:{hours} or $FrequencyCap:{n}"
        ),
        .init(
            input: "$UserId:alice", code: .invalidTag, column: 1,
            message:
                "'$' may only begin a system tag, $InstallationId:{id}, $UserId:{id}, $TimeZone:{zone}, $QuietHours:{hours} or $FrequencyCap:{n}"
        ),
        .init(input: "a || $UserId:{}", code: .invalidTag, column: 15, message: "system tag has an empty id"),
        .init(input: "$UserId:{alice", code: .invalidTag, column: 15, message: "system tag is missing its closing '}'"),
        .init(
            input: "$UserId:{al ice}", code: .invalidTag, column: 12,
            message: "character U+0020 is not allowed in a system tag id (allowed: A-Z a-z 0-9 _ @ # . : - + = / ~ %)"),
        .init(
            input: "$UserId:{a|b}", code: .invalidTag, column: 11,
            message: "character '|' is not allowed in a system tag id (allowed: A-Z a-z 0-9 _ @ # . : - + = / ~ %)"),
        .init(
            input: "$InstallationId:{x{y}}", code: .invalidTag, column: 19,
            message: "character '{' is not allowed in a system tag id (allowed: A-Z a-z 0-9 _ @ # . : - + = / ~ %)"),
        // Tag length (120 by default).
        .init(
            input: String(repeating: "x", count: 121), code: .tagTooLong, column: 1,
            message: "tag is 121 characters long; at most 120 are allowed"),
        .init(
            input: "a && " + String(repeating: "x", count: 200), code: .tagTooLong, column: 6,
            message: "tag is 200 characters long; at most 120 are allowed"),
        .init(
            input: "$UserId:{" + String(repeating: "u", count: 111) + "}", code: .tagTooLong, column: 1,
            message: "tag is 121 characters long; at most 120 are allowed"),
    ]

    @Test("code, column and message", arguments: cases)
    func rejects(_ example: Case) {
        let error = #expect(throws: TagExpressionError.self) { try TagExpression.parse(example.input) }
        #expect(error?.code == example.code)
        #expect(error?.column == example.column)
        #expect(error?.message == example.message)
        #expect(error?.input == example.input)
    }

    @Test("description names what, where and the input")
    func description() {
        let error = #expect(throws: TagExpressionError.self) { try TagExpression.parse("(World || ") }
        #expect(error?.description == #"expected tag or '(' at column 11: "(World || ""#)
        #expect(error?.caret == String(repeating: " ", count: 10) + "^")

        let closing = #expect(throws: TagExpressionError.self) { try TagExpression.parse("(a || b") }
        #expect(closing?.description == #"expected ')' at column 8: "(a || b""#)
    }

    @Test("description shows a window of long inputs around the column")
    func longInputExcerpt() {
        let input = (0..<100).map { "tag\($0)" }.joined(separator: " || ") + " || &&"
        let error = #expect(throws: TagExpressionError.self) { try TagExpression.parse(input) }
        #expect(error?.code == .expectedTag)
        #expect(error?.column == input.count - 1)
        let description = error?.description ?? ""
        #expect(description.count < 160)
        #expect(description.hasSuffix("|| &&\""))
        #expect(description.contains("\"…"))
    }

    @Test("codes are stable strings")
    func stableCodes() {
        #expect(TagExpressionError.Code.expectedTag.rawValue == "expectedTag")
        #expect(TagExpressionError.Code.tooManyTags.description == "tooManyTags")
        #expect(TagExpressionError.Code.unexpectedEnd != .expectedTag)
    }
}

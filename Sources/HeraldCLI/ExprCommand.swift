import ArgumentParser
import HeraldCommandLine
import Foundation
import HeraldDomain

struct ExprCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "expr",
        abstract: "Check or evaluate a tag expression.",
        subcommands: [Check.self, Eval.self]
    )

    struct LimitOptions: ParsableArguments {
        @Flag(help: "Enforce Azure Notification Hubs' limits (20 tags when OR-only, else 6).")
        var azure = false

        var limits: TagExpressionLimits { azure ? .azure : .default }
    }

    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the canonical form of an expression, or the error with a caret under the column."
        )
        @Argument(help: "The expression, or @file.") var expression: String
        @OptionGroup var limitOptions: LimitOptions

        func run() throws {
            let parsed = try ExprCommand.parse(InputArgument.resolve(expression), limits: limitOptions.limits)
            print(parsed.description)
        }
    }

    struct Eval: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print true or false: does a registration with these tags match?"
        )
        @Argument(help: "The expression, or @file.") var expression: String
        @Option(help: "The registration's tags, comma separated.") var tags: String = ""
        @OptionGroup var limitOptions: LimitOptions

        func run() throws {
            let parsed = try ExprCommand.parse(InputArgument.resolve(expression), limits: limitOptions.limits)
            let tagSet = Set(tags.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
            print(parsed.evaluate(tagSet) ? "true" : "false")
        }
    }

    /// Parses, printing the input and a caret under the failing column on error.
    static func parse(_ text: String, limits: TagExpressionLimits) throws -> TagExpression {
        do {
            return try TagExpression.parse(text, limits: limits)
        } catch {
            var stderr = StandardError()
            print(text, to: &stderr)
            print(error.caret, to: &stderr)
            throw CommandFailure("error[\(error.code)]: \(error.description)")
        }
    }
}

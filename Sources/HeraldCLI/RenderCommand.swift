import ArgumentParser
import HeraldCommandLine
import HeraldDomain

struct RenderCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "render",
        abstract: "Render a template with properties, as the fan-out would for one device."
    )

    @Option(help: "The template body, or @file.") var template: String
    @Option(help: "A JSON object of properties, or @file.") var properties: String = "{}"
    @Option(help: "json, xml or text (default: detected from the body).") var format: TemplateFormat?
    @Option(help: "Refuse a rendition over this many bytes, as the fan-out does (the APNs and FCM payload limit).")
    var maxBytes: Int = PayloadLimits.default.apns

    func validate() throws {
        guard maxBytes > 0 else { throw ValidationError("--max-bytes must be positive") }
    }

    func run() throws {
        let body = try InputArgument.resolve(template)
        let format = self.format ?? CompiledTemplate.detectFormat(body)
        let compiled: CompiledTemplate
        do {
            compiled = try CompiledTemplate.compile(body, format: format)
        } catch {
            throw CommandFailure("error[\(error.code)]: \(error.description)")
        }
        let values = try Self.properties(from: InputArgument.resolve(properties))
        guard let rendition = compiled.render(TemplateProperties(values), limit: maxBytes) else {
            throw CommandFailure(
                "error[payload_too_large]: the rendition passes \(maxBytes) bytes (--max-bytes); the fan-out skips such a device")
        }
        print(rendition)
    }

    /// Strings stay strings; numbers and booleans keep their JSON text so `#()` can emit them.
    static func properties(from text: String) throws -> [String: String] {
        let value: JSONValue
        do {
            value = try JSONValue.parse(Array(text.utf8))
        } catch {
            throw CommandFailure("--properties: \(error)")
        }
        guard case .object(let members) = value else {
            throw CommandFailure("--properties: expected a JSON object")
        }
        var result: [String: String] = [:]
        for member in members {
            switch member.value {
            case .string(let string): result[member.key] = string
            case .number(let text): result[member.key] = text
            case .bool(let flag): result[member.key] = flag ? "true" : "false"
            case .null: continue
            default: throw CommandFailure("--properties: property '\(member.key)' must be a string, number or boolean")
            }
        }
        return result
    }
}

extension TemplateFormat: ExpressibleByArgument {}

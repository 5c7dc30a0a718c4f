/// A notification template parsed once and ready to render many times.
///
/// The template language is Azure Notification Hubs': in a JSON string value, an XML text or
/// attribute value, or a whole `text` template,
/// - `$(p)` the value of property `p` (names are case-insensitive, `[A-Za-z0-9_]`, at most
///   120 characters; a missing property renders as "");
/// - `$(p, n)` the first `n` Characters of it; `.(p, n)` at most `n` Characters, ending in
///   "..." when clipped; `%(p)` percent-encoded (RFC 3986 unreserved characters kept);
/// - `#(p)` in JSON: a bare number or `true`/`false` when the value is one, else a string;
///   it must be the whole string value;
/// - `$(p:{text})` with a default used when the property is missing;
/// - `{ a + 'literal' + "literal" + ... }` composites, where `''` or `""` inside a literal
///   stands for the quote itself.
///
/// Beyond Azure, an expression inside longer text is interpolated: `"Breaking: $(title)"`
/// renders `Breaking: ` followed by the title, where Azure would leave the text alone.
///
/// Substituted text is escaped for where it lands, so rendering always produces valid JSON or
/// well-formed XML, whatever the property values hold. Clipping counts Characters (grapheme
/// clusters), so an emoji is never cut in half. See docs/templates.md for the full reference.
public struct CompiledTemplate: Sendable, Hashable {
    /// The body as it was registered.
    public let source: String
    public let format: TemplateFormat
    let program: TemplateProgram

    private init(source: String, format: TemplateFormat, program: TemplateProgram) {
        self.source = source
        self.format = format
        self.program = program
    }

    /// Parses and validates `body`; the error says what is wrong and where.
    public static func compile(
        _ body: String,
        format: TemplateFormat,
        limits: TemplateLimits = .default
    ) throws(TemplateError) -> CompiledTemplate {
        let source = TemplateSource(body)
        guard source.bytes.count <= limits.maxBodyBytes else {
            throw source.error(
                .tooLarge, at: limits.maxBodyBytes,
                "the template is \(source.bytes.count) bytes, over the limit of \(limits.maxBodyBytes)"
            )
        }
        let program: TemplateProgram
        switch format {
        case .json:
            var scanner = JSONTemplateScanner(source: source, limits: limits)
            program = try scanner.scan()
        case .xml:
            var scanner = XMLTemplateScanner(source: source, limits: limits)
            program = try scanner.scan()
        case .text:
            program = try compileText(source, limits: limits)
        }
        return CompiledTemplate(source: body, format: format, program: program)
    }

    /// Guesses the format from the first non-whitespace character: `<` is XML, `{` or `[` is
    /// JSON, anything else is text. Header values and expiry templates should be compiled
    /// as `.text` explicitly, since a text composite also starts with `{`.
    public static func detectFormat(_ body: String) -> TemplateFormat {
        switch body.utf8.first(where: { !TemplateByte.isSpace($0) }) {
        case TemplateByte.lessThan: .xml
        case TemplateByte.openBrace, TemplateByte.openBracket: .json
        default: .text
        }
    }

    /// Lower-cased names of every property the template reads.
    public var referencedProperties: Set<String> { program.referencedProperties }

    /// Lower-cased names of the properties the template reads that `properties` lacks and
    /// that have no default: each renders as "" (a rehearsal shows them to the editor).
    public func missingProperties(_ properties: TemplateProperties) -> Set<String> {
        Set(program.substitutions.lazy.map(\.expression).filter { $0.value(in: properties) == nil }.map(\.property))
    }

    /// The properties read in place of a missing one through a `|` chain (`$(News_fr | News_en)`
    /// with no `News_fr`: `news_en`), lower-cased, sorted, each once; empty when none was.
    public func alternativesUsed(_ properties: TemplateProperties) -> [String] {
        var used: Set<String> = []
        for substitution in program.substitutions {
            if let alternative = substitution.expression.alternativeUsed(in: properties) { used.insert(alternative) }
        }
        return used.sorted()
    }

    /// Bytes the template renders whatever the properties: its literal text, already escaped.
    public var fixedBytes: Int { program.literals.count }

    /// Expressions whose output grows with the property value (not clipped to a length): each
    /// copies a whole value, so N of them multiply a value's size by N.
    public var unboundedSubstitutions: Int {
        program.substitutions.count { substitution in
            switch substitution.expression.operation {
            case .value, .percentEncode, .number: true
            case .clip, .ellipsis: false
            }
        }
    }

    /// True when the template has no expressions and always renders to its source.
    public var isConstant: Bool { program.isConstant }

    public static func == (lhs: CompiledTemplate, rhs: CompiledTemplate) -> Bool {
        lhs.format == rhs.format && lhs.source == rhs.source
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(format)
        hasher.combine(source)
    }

    /// A text template is one value: its literal text is kept as written and values are
    /// made safe for a header line. Validation refuses control characters in the literal text;
    /// any that were stored before become spaces like those of values, so no rendition can
    /// split a header line.
    private static func compileText(_ source: TemplateSource, limits: TemplateLimits) throws(TemplateError) -> TemplateProgram {
        var output = TemplateSegmentList(source: source, limits: limits)
        var parser = TemplateContentParser(text: TemplateText(bytes: source.bytes, base: 0), source: source, limits: limits)
        guard let parts = try parser.parse() else {
            output.appendLiteral(source.bytes, escaping: .header)
            return output.finish()
        }
        let plain = parts.map { part -> TemplatePart in
            guard case .expression(var expression) = part, expression.operation == .number else { return part }
            expression.operation = .value
            return .expression(expression)
        }
        try output.append(plain, escaping: .header, literalEscaping: .header)
        return output.finish()
    }
}

extension CompiledTemplate {
    /// Renders the template with one event's properties.
    public func render(_ properties: TemplateProperties) -> String {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(program.estimatedSize)
        render(properties, into: &buffer)
        return String(decoding: buffer, as: UTF8.self)
    }

    /// Appends the rendered UTF-8 bytes to `buffer`, without a bound (tools and tests; the
    /// fan-out renders with its platform's limit). Literal runs are copied once each and values
    /// escaped straight from their storage.
    public func render(_ properties: TemplateProperties, into buffer: inout [UInt8]) {
        _ = render(properties, into: &buffer, limit: .max)
    }

    /// Appends the rendition unless it passes `limit` bytes. Stops at the first segment that
    /// takes it past the limit, so a template that repeats a long value a thousand times costs
    /// no more than `limit` plus one value; returns false then, and `buffer` holds a partial
    /// rendition the caller must discard.
    public func render(_ properties: TemplateProperties, into buffer: inout [UInt8], limit: Int) -> Bool {
        let program = self.program
        let (end, overflow) = buffer.count.addingReportingOverflow(limit)
        let bound = overflow ? Int.max : end
        return program.literals.withUnsafeBufferPointer { literals in
            for segment in program.segments {
                switch segment {
                case .literal(let range):
                    guard buffer.count + range.count <= bound else { return false }
                    buffer.append(contentsOf: UnsafeBufferPointer(rebasing: literals[range]))
                case .substitution(let index):
                    let substitution = program.substitutions[index]
                    // Escaping never shrinks a value, so its raw size already tells an unclipped
                    // value that cannot fit, before any of it is copied.
                    let expression = substitution.expression
                    let value = expression.value(in: properties)
                    guard buffer.count + expression.minimumOutputBytes(for: value) <= bound else { return false }
                    expression.render(value: value, escaping: substitution.escaping, into: &buffer)
                    guard buffer.count <= bound else { return false }
                }
            }
            return true
        }
    }

    /// The rendition as a string, or nil when it passes `limit` bytes.
    public func render(_ properties: TemplateProperties, limit: Int) -> String? {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(min(program.estimatedSize, limit))
        guard render(properties, into: &buffer, limit: limit) else { return nil }
        return String(decoding: buffer, as: UTF8.self)
    }

    /// Convenience for callers holding a plain dictionary (tools, tests).
    public func render(_ properties: [String: String]) -> String {
        render(TemplateProperties(properties))
    }
}

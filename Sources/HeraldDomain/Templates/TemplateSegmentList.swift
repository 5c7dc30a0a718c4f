/// Collects the segments of a template while a scanner walks its body: literal bytes go into
/// one shared buffer, and consecutive literals become a single segment.
struct TemplateSegmentList {
    private(set) var literals: [UInt8] = []
    private(set) var segments: [TemplateSegment] = []
    private(set) var substitutions: [TemplateSubstitution] = []
    private(set) var properties: Set<String> = []
    private(set) var expressionCount = 0
    private var openLiteralStart = 0
    private let limits: TemplateLimits
    private let source: TemplateSource

    init(source: TemplateSource, limits: TemplateLimits) {
        self.source = source
        self.limits = limits
        literals.reserveCapacity(source.bytes.count)
    }

    mutating func appendSource(_ range: Range<Int>) {
        literals.append(contentsOf: source.bytes[range])
    }

    mutating func appendLiteral(_ bytes: [UInt8], escaping: TemplateEscaping?) {
        if let escaping {
            escaping.append(bytes, into: &literals)
        } else {
            literals.append(contentsOf: bytes)
        }
    }

    mutating func appendByte(_ byte: UInt8) {
        literals.append(byte)
    }

    mutating func appendSubstitution(_ expression: TemplateExpression, escaping: TemplateEscaping) throws(TemplateError) {
        expressionCount += 1
        if expressionCount > limits.maxExpressions {
            throw source.error(
                .tooManyExpressions, at: expression.offset,
                "more than \(limits.maxExpressions) expressions in one template"
            )
        }
        closeLiteral()
        segments.append(.substitution(substitutions.count))
        substitutions.append(TemplateSubstitution(expression: expression, escaping: escaping))
        properties.insert(expression.property)
        properties.formUnion(expression.alternatives)
    }

    /// Appends parsed parts; literal parts are escaped like values since they were decoded
    /// from the template's own escapes or entities.
    mutating func append(_ parts: [TemplatePart], escaping: TemplateEscaping, literalEscaping: TemplateEscaping?) throws(TemplateError) {
        for part in parts {
            switch part {
            case .literal(let bytes): appendLiteral(bytes, escaping: literalEscaping)
            case .expression(let expression): try appendSubstitution(expression, escaping: escaping)
            }
        }
    }

    mutating func finish() -> TemplateProgram {
        closeLiteral()
        return TemplateProgram(
            literals: literals, segments: segments, substitutions: substitutions, referencedProperties: properties)
    }

    private mutating func closeLiteral() {
        if openLiteralStart < literals.count {
            segments.append(.literal(openLiteralStart..<literals.count))
        }
        openLiteralStart = literals.count
    }
}

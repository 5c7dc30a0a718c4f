/// The compiled form of a template, shared by every copy of a `CompiledTemplate`.
final class TemplateProgram: Sendable {
    let literals: [UInt8]
    let segments: [TemplateSegment]
    let referencedProperties: Set<String>
    let isConstant: Bool
    /// Rough output size, to size the render buffer once.
    let estimatedSize: Int

    init(literals: [UInt8], segments: [TemplateSegment], referencedProperties: Set<String>) {
        self.literals = literals
        self.segments = segments
        self.referencedProperties = referencedProperties
        let substitutions = segments.count { if case .substitution = $0 { true } else { false } }
        self.isConstant = substitutions == 0
        self.estimatedSize = literals.count + substitutions * 48
    }
}

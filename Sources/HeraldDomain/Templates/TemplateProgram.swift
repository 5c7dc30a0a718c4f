/// The compiled form of a template, shared by every copy of a `CompiledTemplate`.
final class TemplateProgram: Sendable {
    let literals: [UInt8]
    let segments: [TemplateSegment]
    let substitutions: [TemplateSubstitution]
    let referencedProperties: Set<String>
    let isConstant: Bool
    /// Rough output size, to size the render buffer once.
    let estimatedSize: Int

    init(
        literals: [UInt8], segments: [TemplateSegment], substitutions: [TemplateSubstitution],
        referencedProperties: Set<String>
    ) {
        self.literals = literals
        self.segments = segments
        self.substitutions = substitutions
        self.referencedProperties = referencedProperties
        self.isConstant = substitutions.isEmpty
        self.estimatedSize = literals.count + substitutions.count * 48
    }
}

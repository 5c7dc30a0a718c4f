/// One step of rendering: copy a run of prepared bytes, or substitute a property.
///
/// Payloads are plain integers so walking the segments costs no reference counting.
enum TemplateSegment: Sendable {
    /// A range of `TemplateProgram.literals`, already escaped for its context.
    case literal(Range<Int>)
    /// An index into `TemplateProgram.substitutions`.
    case substitution(Int)
}

/// A property value to write: the expression that reads and transforms it, and the escaping
/// of the place it lands in. A `.number` expression with `.jsonString` escaping stands for a
/// whole JSON value and writes its own quotes when the value is not a number or boolean.
struct TemplateSubstitution: Sendable {
    var expression: TemplateExpression
    var escaping: TemplateEscaping
}

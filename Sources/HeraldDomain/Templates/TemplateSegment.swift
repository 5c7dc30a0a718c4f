/// One step of rendering: copy a run of prepared bytes, or substitute a property.
enum TemplateSegment: Sendable {
    /// A range of `TemplateProgram.literals`, already escaped for its context.
    case literal(Range<Int>)
    /// A property value, transformed by the expression and escaped for its context. A
    /// `.number` expression with `.jsonString` escaping stands for a whole JSON value and
    /// writes its own quotes when the value is not a number or boolean.
    case substitution(TemplateExpression, TemplateEscaping)
}

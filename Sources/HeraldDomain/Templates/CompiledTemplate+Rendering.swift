extension CompiledTemplate {
    /// Renders the template with one event's properties.
    public func render(_ properties: TemplateProperties) -> String {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(program.estimatedSize)
        render(properties, into: &buffer)
        return String(decoding: buffer, as: UTF8.self)
    }

    /// Appends the rendered UTF-8 bytes to `buffer`: the fan-out's hot path, which writes
    /// literal runs with one copy each and escapes values straight from their storage.
    public func render(_ properties: TemplateProperties, into buffer: inout [UInt8]) {
        let program = self.program
        program.literals.withUnsafeBufferPointer { literals in
            for segment in program.segments {
                switch segment {
                case .literal(let range):
                    buffer.append(contentsOf: UnsafeBufferPointer(rebasing: literals[range]))
                case .substitution(let index):
                    let substitution = program.substitutions[index]
                    substitution.expression.render(properties, escaping: substitution.escaping, into: &buffer)
                }
            }
        }
    }

    /// Convenience for callers holding a plain dictionary (tools, tests).
    public func render(_ properties: [String: String]) -> String {
        render(TemplateProperties(properties))
    }
}

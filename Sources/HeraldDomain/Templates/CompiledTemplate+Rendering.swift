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

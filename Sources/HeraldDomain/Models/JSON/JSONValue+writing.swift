extension JSONValue {
    /// Appends this value as compact JSON (no whitespace). With `sortingKeys`, object
    /// members are written in code-point order of their keys, which gives one canonical
    /// text for documents that differ only in member order; otherwise document order.
    public func write(into bytes: inout [UInt8], sortingKeys: Bool = false) {
        switch self {
        case .null: JSONOutput.appendRaw("null", to: &bytes)
        case .bool(let value): value ? JSONOutput.appendRaw("true", to: &bytes) : JSONOutput.appendRaw("false", to: &bytes)
        case .number(let text): bytes.append(contentsOf: text.utf8)
        case .string(let text): JSONOutput.appendString(text, to: &bytes)
        case .array(let elements):
            bytes.append(UInt8(ascii: "["))
            for (position, element) in elements.enumerated() {
                if position > 0 { bytes.append(UInt8(ascii: ",")) }
                element.write(into: &bytes, sortingKeys: sortingKeys)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let members):
            bytes.append(UInt8(ascii: "{"))
            let ordered = sortingKeys ? members.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) } : members
            for (position, member) in ordered.enumerated() {
                if position > 0 { bytes.append(UInt8(ascii: ",")) }
                JSONOutput.appendString(member.key, to: &bytes)
                bytes.append(UInt8(ascii: ":"))
                member.value.write(into: &bytes, sortingKeys: sortingKeys)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    /// This value as compact JSON text.
    public func compactText(sortingKeys: Bool = false) -> String {
        var bytes: [UInt8] = []
        write(into: &bytes, sortingKeys: sortingKeys)
        return String(decoding: bytes, as: UTF8.self)
    }
}

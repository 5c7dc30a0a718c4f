/// Reading parsed JSON without a pattern match per member: each accessor is nil when the value
/// is of another kind.
extension JSONValue {
    public var stringValue: String? { if case .string(let text) = self { text } else { nil } }
    public var arrayValue: [JSONValue]? { if case .array(let elements) = self { elements } else { nil } }
    /// The strings of an array (other elements left out); empty for anything else.
    public var strings: [String] { arrayValue?.compactMap(\.stringValue) ?? [] }
    /// A number that is a whole `Int` as written (`12`, not `12.0`).
    public var intValue: Int? { if case .number(let text) = self { Int(text) } else { nil } }
    public var boolValue: Bool? { if case .bool(let flag) = self { flag } else { nil } }
    /// The element at `index` of an array; nil past its end or for anything else.
    public subscript(index: Int) -> JSONValue? { arrayValue.flatMap { index >= 0 && index < $0.count ? $0[index] : nil } }
}

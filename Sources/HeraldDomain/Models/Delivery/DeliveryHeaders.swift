/// The platform headers of one delivery, in a fixed order: the headers Herald derives
/// from the event first, then the registration's own header templates sorted by name.
///
/// Order matters only for byte-identical output (the delivery encoder writes them in
/// this order); two header lists with the same fields in another order are equal, since
/// HTTP gives header order no meaning and JSON decoders do not report member order.
public struct DeliveryHeaders: Sendable, Sequence, ExpressibleByDictionaryLiteral {
    public struct Field: Sendable, Hashable {
        public var name: String
        public var value: String

        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    public private(set) var fields: [Field]

    public init(_ fields: [Field] = []) {
        self.fields = fields
    }

    public init(dictionaryLiteral elements: (String, String)...) {
        fields = elements.map { Field(name: $0.0, value: $0.1) }
    }

    /// The value of the first field named `name` (case-insensitively), or `nil`.
    public subscript(name: String) -> String? {
        fields.first { $0.name.caseInsensitiveEquals(name) }?.value
    }

    public mutating func append(name: String, value: String) {
        fields.append(Field(name: name, value: value))
    }

    public var count: Int { fields.count }
    public var isEmpty: Bool { fields.isEmpty }

    public func makeIterator() -> IndexingIterator<[Field]> {
        fields.makeIterator()
    }
}

extension DeliveryHeaders: Hashable {
    public static func == (lhs: DeliveryHeaders, rhs: DeliveryHeaders) -> Bool {
        lhs.fields.count == rhs.fields.count && Set(lhs.fields) == Set(rhs.fields)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(Set(fields))
    }
}

extension String {
    /// ASCII case-insensitive comparison, which is what HTTP header names need.
    func caseInsensitiveEquals(_ other: String) -> Bool {
        guard utf8.count == other.utf8.count else { return false }
        return zip(utf8, other.utf8).allSatisfy { lhs, rhs in
            lhs == rhs || (lhs | 0x20 == rhs | 0x20 && (lhs | 0x20) >= UInt8(ascii: "a") && (lhs | 0x20) <= UInt8(ascii: "z"))
        }
    }
}

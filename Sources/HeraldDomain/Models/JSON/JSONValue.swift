/// A parsed JSON document that keeps what Foundation's parsers drop and Herald needs:
/// the order of object members (so a native payload is forwarded as written), the exact
/// source text of numbers (so `#(count)` emits `1.50` and not `1.5`), and, when parsing
/// fails, the line and column of the problem.
///
/// Used to read untrusted input (events, registrations, installations) field by field so
/// validation can report every problem with its path instead of stopping at the first.
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    /// A number as its JSON source text, for example `-1.5e3`.
    case number(String)
    case string(String)
    case array([JSONValue])
    /// Members in document order. A repeated key is kept twice; ``subscript(_:)`` answers
    /// with the last one, as most JSON readers do.
    case object([JSONMember])

    /// The member named `key` of an object (the last one if repeated), or `nil`.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.last(where: { $0.key == key })?.value
    }

    /// "a string", "an object" and so on, for messages such as "expected a string, found a number".
    public var kindDescription: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

/// One `"key": value` pair of a JSON object.
public struct JSONMember: Sendable, Hashable {
    public var key: String
    public var value: JSONValue

    public init(key: String, value: JSONValue) {
        self.key = key
        self.value = value
    }
}

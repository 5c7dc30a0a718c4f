/// Lets a `JSONValue` travel inside `Codable` types (for example a native payload inside an
/// event embedded in a fan-out task). Numbers go through `Int64` or `Double`, so their
/// exact source text survives only when it is already in that canonical form; objects come
/// back with their keys sorted, because `Decoder` does not report member order.
extension JSONValue: Codable {
    public init(from decoder: any Decoder) throws {
        if var array = try? decoder.unkeyedContainer() {
            var elements: [JSONValue] = []
            while !array.isAtEnd { elements.append(try array.decode(JSONValue.self)) }
            self = .array(elements)
            return
        }
        if let object = try? decoder.container(keyedBy: JSONCodingKey.self) {
            let keys = object.allKeys.sorted { $0.stringValue.utf8.lexicographicallyPrecedes($1.stringValue.utf8) }
            var members: [JSONMember] = []
            for key in keys {
                members.append(JSONMember(key: key.stringValue, value: try object.decode(JSONValue.self, forKey: key)))
            }
            self = .object(members)
            return
        }
        let single = try decoder.singleValueContainer()
        if single.decodeNil() {
            self = .null
        } else if let value = try? single.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? single.decode(Int64.self) {
            self = .number(String(value))
        } else if let value = try? single.decode(Double.self) {
            self = .number(value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value))
        } else {
            self = .string(try single.decode(String.self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .null:
            var single = encoder.singleValueContainer()
            try single.encodeNil()
        case .bool(let value):
            var single = encoder.singleValueContainer()
            try single.encode(value)
        case .number(let text):
            var single = encoder.singleValueContainer()
            if let integer = Int64(text) {
                try single.encode(integer)
            } else {
                try single.encode(Double(text) ?? 0)
            }
        case .string(let value):
            var single = encoder.singleValueContainer()
            try single.encode(value)
        case .array(let elements):
            var array = encoder.unkeyedContainer()
            for element in elements { try array.encode(element) }
        case .object(let members):
            var object = encoder.container(keyedBy: JSONCodingKey.self)
            for member in members { try object.encode(member.value, forKey: JSONCodingKey(member.key)) }
        }
    }
}

/// A coding key for arbitrary member names (header names, property names, platforms).
struct JSONCodingKey: CodingKey, Hashable {
    var stringValue: String
    var intValue: Int? { nil }

    init(_ string: String) { stringValue = string }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

/// One decoded Redis reply.
///
/// Bulk strings stay raw bytes because Herald stores binary payloads; `string` decodes them
/// only when asked. A top-level error reply never becomes a value (it is the command's
/// failure, a `RedisError`); `.error` only appears nested, for example inside a script's array.
public enum RedisValue: Sendable, Hashable {
    /// A status reply such as `OK` or `PONG`.
    case simpleString(String)
    /// An error reply nested inside an array.
    case error(String)
    case integer(Int)
    case bulkString([UInt8])
    case null
    case array([RedisValue])
}

extension RedisValue {
    /// Status replies, and bulk strings that are valid UTF-8.
    public var string: String? {
        switch self {
        case .simpleString(let text): text
        case .bulkString(let bytes): String(validating: bytes, as: UTF8.self)
        default: nil
        }
    }

    /// Integer replies, and strings holding a decimal integer (what `GET` returns for a counter).
    public var int: Int? {
        switch self {
        case .integer(let value): value
        case .bulkString, .simpleString: string.flatMap { Int($0) }
        default: nil
        }
    }

    /// The raw bytes of a bulk string or status reply.
    public var bytes: [UInt8]? {
        switch self {
        case .bulkString(let bytes): bytes
        case .simpleString(let text): Array(text.utf8)
        default: nil
        }
    }

    public var array: [RedisValue]? {
        if case .array(let elements) = self { return elements }
        return nil
    }

    public var isNull: Bool { self == .null }

    /// The reply to a `SCAN`-family command: the next cursor (0 means done) and this page.
    public var scanPage: (cursor: UInt64, elements: [RedisValue])? {
        guard case .array(let parts) = self, parts.count == 2,
            let cursor = parts[0].string.flatMap({ UInt64($0) }),
            let elements = parts[1].array
        else { return nil }
        return (cursor, elements)
    }

    /// A flat `[field, value, field, value, ...]` reply (`HGETALL`) as a dictionary keyed by
    /// the field's UTF-8 text; nil when the reply is not such an array.
    public var fieldValuePairs: [String: RedisValue]? {
        guard case .array(let parts) = self, parts.count % 2 == 0 else { return nil }
        var result: [String: RedisValue] = [:]
        result.reserveCapacity(parts.count / 2)
        var index = 0
        while index < parts.count {
            guard let field = parts[index].string else { return nil }
            result[field] = parts[index + 1]
            index += 2
        }
        return result
    }
}

extension RedisValue: CustomStringConvertible {
    public var description: String {
        switch self {
        case .simpleString(let text): return "+\(text)"
        case .error(let text): return "-\(text)"
        case .integer(let value): return ":\(value)"
        case .bulkString(let bytes):
            if let text = String(validating: bytes, as: UTF8.self) { return "\"\(text)\"" }
            return "<\(bytes.count) bytes>"
        case .null: return "(nil)"
        case .array(let elements): return "[" + elements.map(\.description).joined(separator: ", ") + "]"
        }
    }
}

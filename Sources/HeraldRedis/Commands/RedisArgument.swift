/// A value that can be one argument of a Redis command, written as the exact bytes Redis sees.
///
/// Strings are sent as UTF-8, integers and doubles in their decimal text form (what Redis
/// parses), byte arrays unchanged, so values with NUL bytes or invalid UTF-8 are safe.
public protocol RedisArgument: Sendable {
    func appendRedisBytes(to buffer: inout [UInt8])
}

extension String: RedisArgument {
    @inlinable public func appendRedisBytes(to buffer: inout [UInt8]) { buffer.append(contentsOf: utf8) }
}

extension Substring: RedisArgument {
    @inlinable public func appendRedisBytes(to buffer: inout [UInt8]) { buffer.append(contentsOf: utf8) }
}

extension Int: RedisArgument {
    @inlinable public func appendRedisBytes(to buffer: inout [UInt8]) { buffer.append(contentsOf: String(self).utf8) }
}

extension Int64: RedisArgument {
    @inlinable public func appendRedisBytes(to buffer: inout [UInt8]) { buffer.append(contentsOf: String(self).utf8) }
}

extension UInt64: RedisArgument {
    @inlinable public func appendRedisBytes(to buffer: inout [UInt8]) { buffer.append(contentsOf: String(self).utf8) }
}

extension Double: RedisArgument {
    @inlinable public func appendRedisBytes(to buffer: inout [UInt8]) { buffer.append(contentsOf: String(self).utf8) }
}

extension Array: RedisArgument where Element == UInt8 {
    @inlinable public func appendRedisBytes(to buffer: inout [UInt8]) { buffer.append(contentsOf: self) }
}

extension ArraySlice: RedisArgument where Element == UInt8 {
    @inlinable public func appendRedisBytes(to buffer: inout [UInt8]) { buffer.append(contentsOf: self) }
}

// Hash commands (registration records are hashes).
extension RedisCommand {
    /// `HSET key field value [field value ...]`.
    public static func hset<Field: RedisArgument, Value: RedisArgument>(
        _ key: some RedisArgument, _ fields: [(Field, Value)]
    ) -> RedisCommand {
        var command = RedisCommand(name: "HSET", isReadOnly: false, capacity: 128, argumentCount: 2 + 2 * fields.count)
        command.append(key)
        for (field, value) in fields {
            command.append(field)
            command.append(value)
        }
        return command
    }

    /// `HLEN key`: the number of fields.
    public static func hlen(_ key: some RedisArgument) -> RedisCommand {
        var command = RedisCommand(name: "HLEN", isReadOnly: true)
        command.append(key)
        return command
    }

    public static func hgetall(_ key: some RedisArgument) -> RedisCommand {
        var command = RedisCommand(name: "HGETALL", isReadOnly: true)
        command.append(key)
        return command
    }

    public static func hmget<Field: RedisArgument>(_ key: some RedisArgument, _ fields: [Field]) -> RedisCommand {
        var command = RedisCommand(name: "HMGET", isReadOnly: true, argumentCount: 2 + fields.count)
        command.append(key)
        command.append(contentsOf: fields)
        return command
    }

    public static func hdel<Field: RedisArgument>(_ key: some RedisArgument, _ fields: [Field]) -> RedisCommand {
        var command = RedisCommand(name: "HDEL", isReadOnly: false, argumentCount: 2 + fields.count)
        command.append(key)
        command.append(contentsOf: fields)
        return command
    }
}

extension RedisCommand {
    /// `HSCAN key cursor [MATCH pattern] [COUNT n]`: a page of `[cursor, [field, value, ...]]`;
    /// start with cursor 0, stop when it returns 0.
    public static func hscan(
        _ key: some RedisArgument, cursor: UInt64, match pattern: String? = nil, count: Int? = nil
    ) -> RedisCommand {
        var command = RedisCommand(name: "HSCAN", isReadOnly: true)
        command.append(key)
        command.append(cursor)
        command.appendScanOptions(match: pattern, count: count)
        return command
    }
}

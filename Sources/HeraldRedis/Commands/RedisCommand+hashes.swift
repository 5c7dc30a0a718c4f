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

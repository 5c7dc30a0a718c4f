// Set commands (the tag index is one set of registration ids per tag and slot).
extension RedisCommand {
    public static func sadd<Member: RedisArgument>(_ key: some RedisArgument, _ members: [Member]) -> RedisCommand {
        var command = RedisCommand(name: "SADD", isReadOnly: false, argumentCount: 2 + members.count)
        command.append(key)
        command.append(contentsOf: members)
        return command
    }

    public static func srem<Member: RedisArgument>(_ key: some RedisArgument, _ members: [Member]) -> RedisCommand {
        var command = RedisCommand(name: "SREM", isReadOnly: false, argumentCount: 2 + members.count)
        command.append(key)
        command.append(contentsOf: members)
        return command
    }

    public static func smembers(_ key: some RedisArgument) -> RedisCommand {
        var command = RedisCommand(name: "SMEMBERS", isReadOnly: true)
        command.append(key)
        return command
    }

    public static func sismember(_ key: some RedisArgument, _ member: some RedisArgument) -> RedisCommand {
        var command = RedisCommand(name: "SISMEMBER", isReadOnly: true)
        command.append(key)
        command.append(member)
        return command
    }

    public static func scard(_ key: some RedisArgument) -> RedisCommand {
        var command = RedisCommand(name: "SCARD", isReadOnly: true)
        command.append(key)
        return command
    }

    /// `SSCAN key cursor [MATCH pattern] [COUNT n]`; start with cursor 0, stop when it returns 0.
    public static func sscan(
        _ key: some RedisArgument, cursor: UInt64, match pattern: String? = nil, count: Int? = nil
    ) -> RedisCommand {
        var command = RedisCommand(name: "SSCAN", isReadOnly: true)
        command.append(key)
        command.append(cursor)
        command.appendScanOptions(match: pattern, count: count)
        return command
    }

    public static func sinterstore<Key: RedisArgument>(_ destination: some RedisArgument, _ keys: [Key]) -> RedisCommand {
        setStore("SINTERSTORE", destination, keys)
    }

    public static func sunionstore<Key: RedisArgument>(_ destination: some RedisArgument, _ keys: [Key]) -> RedisCommand {
        setStore("SUNIONSTORE", destination, keys)
    }

    public static func sdiffstore<Key: RedisArgument>(_ destination: some RedisArgument, _ keys: [Key]) -> RedisCommand {
        setStore("SDIFFSTORE", destination, keys)
    }

    private static func setStore<Key: RedisArgument>(
        _ name: String, _ destination: some RedisArgument, _ keys: [Key]
    ) -> RedisCommand {
        var command = RedisCommand(name: name, isReadOnly: false, argumentCount: 2 + keys.count)
        command.append(destination)
        command.append(contentsOf: keys)
        return command
    }
}

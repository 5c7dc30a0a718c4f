// Commands on keys and plain string values.
extension RedisCommand {
    public static func get(_ key: some RedisArgument) -> RedisCommand {
        var command = RedisCommand(name: "GET", isReadOnly: true)
        command.append(key)
        return command
    }

    /// `SET key value [EX seconds] [NX]`.
    public static func set(
        _ key: some RedisArgument, _ value: some RedisArgument,
        expireSeconds: Int? = nil, onlyIfAbsent: Bool = false
    ) -> RedisCommand {
        var command = RedisCommand(name: "SET", isReadOnly: false)
        command.append(key)
        command.append(value)
        if let expireSeconds {
            command.append("EX")
            command.append(expireSeconds)
        }
        if onlyIfAbsent { command.append("NX") }
        return command
    }

    public static func mget<Key: RedisArgument>(_ keys: [Key]) -> RedisCommand {
        var command = RedisCommand(name: "MGET", isReadOnly: true, argumentCount: keys.count + 1)
        command.append(contentsOf: keys)
        return command
    }

    public static func incr(_ key: some RedisArgument) -> RedisCommand {
        var command = RedisCommand(name: "INCR", isReadOnly: false)
        command.append(key)
        return command
    }

    public static func del<Key: RedisArgument>(_ keys: [Key]) -> RedisCommand {
        var command = RedisCommand(name: "DEL", isReadOnly: false, argumentCount: keys.count + 1)
        command.append(contentsOf: keys)
        return command
    }

    public static func del(_ key: some RedisArgument) -> RedisCommand { del([key]) }

    public static func exists<Key: RedisArgument>(_ keys: [Key]) -> RedisCommand {
        var command = RedisCommand(name: "EXISTS", isReadOnly: true, argumentCount: keys.count + 1)
        command.append(contentsOf: keys)
        return command
    }

    public static func exists(_ key: some RedisArgument) -> RedisCommand { exists([key]) }

    public static func expire(_ key: some RedisArgument, seconds: Int) -> RedisCommand {
        var command = RedisCommand(name: "EXPIRE", isReadOnly: false)
        command.append(key)
        command.append(seconds)
        return command
    }

    /// `SCAN cursor [MATCH pattern] [COUNT n]`; start with cursor 0, stop when it returns 0.
    public static func scan(cursor: UInt64, match pattern: String? = nil, count: Int? = nil) -> RedisCommand {
        var command = RedisCommand(name: "SCAN", isReadOnly: true)
        command.append(cursor)
        command.appendScanOptions(match: pattern, count: count)
        return command
    }

    mutating func appendScanOptions(match pattern: String?, count: Int?) {
        if let pattern {
            append("MATCH")
            append(pattern)
        }
        if let count {
            append("COUNT")
            append(count)
        }
    }
}

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

// Connection and server commands.
extension RedisCommand {
    public static var ping: RedisCommand { RedisCommand(name: "PING", isReadOnly: true) }

    /// `INFO [section]`; the reply is a bulk string of `name:value` lines.
    public static func info(_ section: String? = nil) -> RedisCommand {
        var command = RedisCommand(name: "INFO", isReadOnly: true)
        if let section { command.append(section) }
        return command
    }

    /// Deletes every key in every database. Only for tests and `herald reindex --from-scratch`.
    /// `CLUSTER SLOTS`: which master and replicas serve each range of hash slots.
    public static var clusterSlots: RedisCommand { RedisCommand("CLUSTER", "SLOTS", isReadOnly: true) }

    public static var flushall: RedisCommand { RedisCommand(name: "FLUSHALL", isReadOnly: false) }

    public static func select(_ database: Int) -> RedisCommand {
        var command = RedisCommand(name: "SELECT", isReadOnly: false)
        command.append(database)
        return command
    }

    public static func auth(username: String? = nil, password: String) -> RedisCommand {
        var command = RedisCommand(name: "AUTH", isReadOnly: false)
        if let username { command.append(username) }
        command.append(password)
        return command
    }
}

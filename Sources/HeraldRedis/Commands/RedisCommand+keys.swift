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

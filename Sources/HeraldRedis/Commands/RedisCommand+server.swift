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

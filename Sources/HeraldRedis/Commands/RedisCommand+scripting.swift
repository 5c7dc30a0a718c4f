import Crypto

// Lua scripting commands. Prefer `RedisCommand.evalScript` / `RedisConnection.evalScript`,
// which carry the script so a NOSCRIPT reply can be repaired by loading it.
extension RedisCommand {
    /// `EVALSHA sha numkeys key... arg...` for `script`; pipelines load the script on NOSCRIPT.
    public static func evalScript<Key: RedisArgument, Argument: RedisArgument>(
        _ script: RedisScript, keys: [Key], arguments: [Argument]
    ) -> RedisCommand {
        var command = evalsha(script.sha1, keys: keys, arguments: arguments)
        command.script = script
        return command
    }

    /// `EVALSHA sha numkeys key... arg...` with no fallback: a missing script is a NOSCRIPT error.
    public static func evalsha<Key: RedisArgument, Argument: RedisArgument>(
        _ sha1: String, keys: [Key], arguments: [Argument]
    ) -> RedisCommand {
        var command = RedisCommand(name: "EVALSHA", isReadOnly: false, capacity: 128, argumentCount: 3 + keys.count + arguments.count)
        command.append(sha1)
        command.append(keys.count)
        command.append(contentsOf: keys)
        command.append(contentsOf: arguments)
        return command
    }

    /// `EVAL source numkeys key... arg...` (sends the whole source every time).
    public static func eval<Key: RedisArgument, Argument: RedisArgument>(
        _ source: String, keys: [Key], arguments: [Argument]
    ) -> RedisCommand {
        var command = RedisCommand(
            name: "EVAL", isReadOnly: false, capacity: 128 + source.utf8.count, argumentCount: 3 + keys.count + arguments.count)
        command.append(source)
        command.append(keys.count)
        command.append(contentsOf: keys)
        command.append(contentsOf: arguments)
        return command
    }

    /// `SCRIPT LOAD source`; the reply is the script's SHA1 in hex.
    public static func scriptLoad(_ source: String) -> RedisCommand {
        var command = RedisCommand(name: "SCRIPT", isReadOnly: false, capacity: 16 + source.utf8.count)
        command.append("LOAD")
        command.append(source)
        return command
    }

    /// `SCRIPT EXISTS sha...`; the reply is one 0/1 integer per SHA1.
    public static func scriptExists(_ sha1s: [String]) -> RedisCommand {
        var command = RedisCommand(name: "SCRIPT", isReadOnly: true)
        command.append("EXISTS")
        command.append(contentsOf: sha1s)
        return command
    }

    public static var scriptFlush: RedisCommand { RedisCommand("SCRIPT", "FLUSH") }
}

/// A Lua script and its SHA1, computed locally so `EVALSHA` can be pipelined without first
/// asking Redis for the digest (Redis names scripts by the SHA1 of their exact source bytes).
public struct RedisScript: Sendable, Hashable {
    public let source: String
    /// Lowercase hex SHA1 of `source`, the name Redis uses in `EVALSHA` and `SCRIPT EXISTS`.
    public let sha1: String

    public init(_ source: String) {
        self.source = source
        self.sha1 = Insecure.SHA1.hash(data: Array(source.utf8)).map { $0 < 16 ? "0" + String($0, radix: 16) : String($0, radix: 16) }
            .joined()
    }
}

/// Which words of a command are keys, for routing it to the node that owns their slot.
///
/// The table covers the commands Herald sends; a command not in it has no known keys and
/// cannot be routed (`RedisClusterRoutingError.unknownCommand`), so a new command fails in
/// the tests that first send it instead of reaching a random node.
public enum RedisClusterKeys {
    /// Where a command's keys are.
    enum Positions: Equatable {
        /// No keys: sent to any node, or to every master (`INFO`, `PING`, `SCAN`).
        case none
        /// Word 1 only (most data commands).
        case first
        /// Every word from 1 on (`DEL`, `MGET`, `EXISTS`, `UNLINK`, `SINTERSTORE` and its kin).
        case all
        /// Words 1, 3, 5, ... (`MSET`).
        case everyOther
        /// `EVAL`/`EVALSHA`: word 2 is the number of keys that follow it.
        case script
    }

    static let table: [String: Positions] = {
        var table: [String: Positions] = [:]
        for name in [
            "GET", "SET", "INCR", "EXPIRE", "TYPE", "HGET", "HSET", "HSETNX", "HDEL", "HMGET", "HGETALL", "SADD", "SREM",
            "SCARD", "SISMEMBER", "SMEMBERS", "SSCAN", "LPUSH", "LRANGE", "LLEN", "ZRANGE", "ZADD", "ZREM", "ZRANGEBYSCORE", "ZSCORE",
            "ZREVRANGEBYSCORE", "ZREMRANGEBYSCORE",
            "ZCARD",
            "OBJECT",
            "SETBIT", "GETBIT", "STRLEN", "HLEN", "HVALS", "PEXPIRE", "ZREVRANGE", "ZREMRANGEBYRANK",
        ] {
            table[name] = .first
        }
        for name in ["DEL", "UNLINK", "EXISTS", "MGET", "SINTERSTORE", "SUNIONSTORE", "SDIFFSTORE"] { table[name] = .all }
        table["MSET"] = .everyOther
        for name in ["EVAL", "EVALSHA"] { table[name] = .script }
        for name in [
            "PING", "INFO", "SCAN", "SCRIPT", "AUTH", "SELECT", "FLUSHALL", "FLUSHDB", "DBSIZE", "KEYS", "CLUSTER", "READONLY", "ASKING",
        ] {
            table[name] = Positions.none
        }
        return table
    }()

    /// The key words of `command` (for `OBJECT ENCODING key`, the word after the subcommand).
    public static func keys(of command: RedisCommand) throws(RedisClusterRoutingError) -> [ArraySlice<UInt8>] {
        guard let (name, positions) = positions(of: command) else { throw .unknownCommand(command.label) }
        switch positions {
        case .none:
            return []
        case .first:
            let index = name == "OBJECT" ? 2 : 1
            return command.count > index ? [command[index]] : []
        case .all:
            return (1..<command.count).map { command[$0] }
        case .everyOther:
            return stride(from: 1, to: command.count, by: 2).map { command[$0] }
        case .script:
            guard command.count > 2, let count = Int(String(decoding: command[2], as: UTF8.self)), count >= 0,
                command.count >= 3 + count
            else { throw .malformed(command.label, "the number of keys is missing or larger than the arguments") }
            return (0..<count).map { command[3 + $0] }
        }
    }

    /// The upper-case name of `command` and where its keys are, nil for a command not in the
    /// table. Herald spells command names in upper case, so that lookup comes first.
    static func positions(of command: RedisCommand) -> (name: String, positions: Positions)? {
        let name = command.name
        if let positions = table[name] { return (name, positions) }
        let upper = name.uppercased()
        return table[upper].map { (upper, $0) }
    }

    /// True when `command` may name keys in more than one slot (a command with keys at
    /// several positions and more than one argument after its name).
    static func maySpanSlots(_ command: RedisCommand) -> Bool {
        guard command.count > 2, let (_, positions) = positions(of: command) else { return false }
        return positions == .all || positions == .everyOther || positions == .script
    }

    /// The one slot all keys of `command` hash to, or nil for a command without keys.
    /// Keys in two slots are a programming error: the error names them.
    public static func slot(of command: RedisCommand) throws(RedisClusterRoutingError) -> Int? {
        let keys = try keys(of: command)
        guard let first = keys.first else { return nil }
        let slot = RedisClusterSlot.of(first)
        if let other = keys.first(where: { RedisClusterSlot.of($0) != slot }) {
            throw .crossSlot(
                command.label, keys: [first, other].map { String(decoding: $0, as: UTF8.self) },
                slots: [slot, RedisClusterSlot.of(other)])
        }
        return slot
    }
}

/// A command that cannot be routed in a cluster.
public enum RedisClusterRoutingError: Error, Equatable, CustomStringConvertible {
    /// Its keys hash to different slots; Redis Cluster would answer CROSSSLOT.
    case crossSlot(String, keys: [String], slots: [Int])
    /// Not in the key table.
    case unknownCommand(String)
    case malformed(String, String)

    public var description: String {
        switch self {
        case .crossSlot(let command, let keys, let slots):
            "\(command) touches keys in different cluster slots: \(keys[0]) (slot \(slots[0])) and \(keys[1]) (slot \(slots[1])); give them one hash tag"
        case .unknownCommand(let command):
            "\(command) is not in the cluster key table (RedisClusterKeys); add where its keys are"
        case .malformed(let command, let problem):
            "\(command): \(problem)"
        }
    }
}

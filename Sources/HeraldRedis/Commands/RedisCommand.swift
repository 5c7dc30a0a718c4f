/// One Redis command: its name and binary-safe arguments, ready to hand to hiredis.
///
/// All arguments live in one contiguous byte buffer with their end offsets, so building a
/// command costs two allocations however many arguments it has, and sending it needs no
/// per-argument copies (hiredis gets pointers into the buffer). Build commands with the
/// static constructors (`.get(key)`, `.hset(key, fields)`, ...) or generically:
/// `RedisCommand("OBJECT", "ENCODING", key)`.
public struct RedisCommand: Sendable, Hashable {
    @usableFromInline var storage: [UInt8]
    @usableFromInline var argumentEnds: [Int]

    /// True for commands that only read: they are retried once after a connection failure.
    /// Writes are never retried automatically because the first attempt may have been applied.
    public var isReadOnly: Bool

    /// For `EVALSHA` built from a `RedisScript`: the script to load when Redis answers NOSCRIPT.
    public internal(set) var script: RedisScript?

    /// A command from its words; the first is the command name.
    public init(_ name: String, _ arguments: any RedisArgument..., isReadOnly: Bool = false) {
        self.init(name: name, isReadOnly: isReadOnly)
        for argument in arguments { append(argument) }
    }

    /// A command from its name and an argument list built elsewhere.
    public init(_ name: String, arguments: [any RedisArgument], isReadOnly: Bool = false) {
        self.init(name: name, isReadOnly: isReadOnly)
        for argument in arguments { append(argument) }
    }

    init(name: String, isReadOnly: Bool, capacity: Int = 64, argumentCount: Int = 4) {
        storage = []
        storage.reserveCapacity(capacity)
        argumentEnds = []
        argumentEnds.reserveCapacity(argumentCount)
        self.isReadOnly = isReadOnly
        script = nil
        append(name)
    }

    /// Appends one argument.
    @inlinable
    public mutating func append(_ argument: some RedisArgument) {
        argument.appendRedisBytes(to: &storage)
        argumentEnds.append(storage.count)
    }

    /// Appends each element as its own argument.
    @inlinable
    public mutating func append<S: Sequence>(contentsOf arguments: S) where S.Element: RedisArgument {
        for argument in arguments { append(argument) }
    }

    /// Number of words including the command name.
    public var count: Int { argumentEnds.count }

    /// The command name as given (`GET`, `SCRIPT`, ...).
    public var name: String { String(decoding: self[0], as: UTF8.self) }

    /// The bytes of word `index` (0 is the name).
    public subscript(index: Int) -> ArraySlice<UInt8> {
        let start = index == 0 ? 0 : argumentEnds[index - 1]
        return storage[start..<argumentEnds[index]]
    }

    /// All words, including the name, as separate byte arrays (for logging and tests).
    public var words: [[UInt8]] { (0..<count).map { Array(self[$0]) } }

    /// `NAME` or `NAME SUBCOMMAND` for error messages; never includes keys or values.
    var label: String {
        let upper = name.uppercased()
        if count > 1, ["SCRIPT", "CONFIG", "CLIENT", "OBJECT", "MEMORY"].contains(upper) {
            return upper + " " + String(decoding: self[1], as: UTF8.self).uppercased()
        }
        return upper
    }
}

/// A failure talking to Redis: what went wrong (`code`), with which command and where (`message`).
///
/// `code` is a struct over a private enum so new codes can be added without breaking callers
/// that switch on the existing ones.
public struct RedisError: Error, Sendable, Hashable, CustomStringConvertible {
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String, Sendable, Hashable {
            case connection, io, timeout, `protocol`, server, closed, unexpectedReply, cluster, routing
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// Could not connect (or authenticate / select the database) after all attempts.
        public static let connection = Code(.connection)
        /// The socket failed or the server closed it while a command was in flight.
        public static let io = Code(.io)
        /// No reply within `RedisConfiguration.commandTimeout`.
        public static let timeout = Code(.timeout)
        /// The bytes on the wire were not valid RESP.
        public static let `protocol` = Code(.protocol)
        /// Redis answered with an error reply; see `serverPrefix` (for example `WRONGTYPE`).
        public static let server = Code(.server)
        /// The connection or pool was closed by its owner.
        public static let closed = Code(.closed)
        /// The reply had a shape the caller did not expect (for example a typed accessor).
        public static let unexpectedReply = Code(.unexpectedReply)
        /// A Redis Cluster cannot serve the command: no seed node answered, a seed is not a
        /// cluster node, hash slots have no master, or redirects and retries ran out.
        public static let cluster = Code(.cluster)
        /// A programming error caught before anything is sent: a command whose keys hash to
        /// two cluster slots, or one whose keys the client does not know how to find.
        public static let routing = Code(.routing)

        public var description: String { base.rawValue }
    }

    public var code: Code
    public var message: String
    /// The first word of a server error reply (`NOSCRIPT`, `WRONGTYPE`, `ERR`, ...), else nil.
    public var serverPrefix: String?

    public init(code: Code, message: String, serverPrefix: String? = nil) {
        self.code = code
        self.message = message
        self.serverPrefix = serverPrefix
    }

    /// Errors that leave the connection unusable until it reconnects.
    public var breaksConnection: Bool {
        code == .io || code == .timeout || code == .protocol || code == .connection
    }

    public var description: String { "redis \(code): \(message)" }

    /// Builds the error for a server error reply such as `WRONGTYPE Operation against ...`.
    static func server(reply: String, command: String, endpoint: String) -> RedisError {
        let prefix = reply.prefix(while: { $0 != " " })
        let isUpperWord = !prefix.isEmpty && prefix.allSatisfy { $0.isUppercase || $0 == "_" }
        return RedisError(
            code: .server,
            message: "\(reply) (\(command) on \(endpoint))",
            serverPrefix: isUpperWord ? String(prefix) : nil
        )
    }
}

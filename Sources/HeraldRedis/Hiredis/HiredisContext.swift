import CHiredis

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Owns one blocking hiredis `redisContext` and frees it in `deinit`.
///
/// Not thread-safe: `RedisConnection` serialises every use behind its lock. Every hiredis
/// call in HeraldRedis is in this folder.
final class HiredisContext {
    private let context: UnsafeMutablePointer<redisContext>
    private let endpoint: String

    private init(_ context: UnsafeMutablePointer<redisContext>, endpoint: String) {
        self.context = context
        self.endpoint = endpoint
    }

    deinit { redisFree(context) }

    /// hiredis writes with `write(2)`, and a write to a socket Redis has already closed (a
    /// restart, `CLIENT KILL`, its idle `timeout`) raises SIGPIPE, whose default action ends
    /// the process. Ignored once, process-wide, before the first connection: the write then
    /// fails with EPIPE, which `RedisConnection` handles as a connection failure (reconnect,
    /// and a retry for read-only commands). A test that kills a connection mid-stream died
    /// with signal 13 before this.
    private static let sigpipeIgnored: Void = {
        _ = signal(SIGPIPE, SIG_IGN)
    }()

    /// Opens a TCP connection; blocks up to `timeout` seconds.
    static func connect(host: String, port: Int, timeout: Double, endpoint: String) throws(RedisError) -> HiredisContext {
        Self.sigpipeIgnored
        guard let raw = redisConnectWithTimeout(host, Int32(port), timeval(seconds: timeout)) else {
            throw RedisError(code: .connection, message: "could not allocate a hiredis context for \(endpoint)")
        }
        let context = HiredisContext(raw, endpoint: endpoint)
        if raw.pointee.err != 0 {
            throw RedisError(code: .connection, message: "connect to \(endpoint) failed: \(context.errorText)")
        }
        return context
    }

    /// Bounds every later blocking read and write, so a dead server cannot hang a thread.
    func setCommandTimeout(_ seconds: Double) throws(RedisError) {
        if redisSetTimeout(context, timeval(seconds: seconds)) != REDIS_OK {
            throw RedisError(code: .connection, message: "setting the command timeout on \(endpoint) failed: \(errorText)")
        }
        _ = redisEnableKeepAlive(context)
    }

    /// True once hiredis has seen an error; the context must then be discarded.
    var isBroken: Bool { context.pointee.err != 0 }

    /// Whether the server hung up (or left bytes nobody asked for) while the connection sat
    /// idle. A restarted Redis closes its old sockets, so this catches the restart before a
    /// command is written, when reconnecting is always safe. One non-blocking peek, no I/O.
    var peerHasHungUp: Bool {
        var byte: UInt8 = 0
        let received = recv(context.pointee.fd, &byte, 1, Int32(MSG_PEEK) | Int32(MSG_DONTWAIT))
        if received >= 0 { return true }  // 0: orderly shutdown; >0: replies out of step
        let code = errno
        return !(code == EAGAIN || code == EWOULDBLOCK || code == EINTR)
    }

    /// Queues `command` in hiredis's output buffer; nothing is sent until a reply is read.
    func append(_ command: RedisCommand) throws(RedisError) {
        var wire: [UInt8] = []
        wire.reserveCapacity(command.respCapacityEstimate)
        command.appendRESP(to: &wire)
        try appendWire(wire, count: 1)
    }

    /// Queues `commands` with one copy into hiredis's output buffer.
    func append(_ commands: [RedisCommand]) throws(RedisError) {
        var capacity = 0
        // Indexing (not `for command in`) avoids copying each command, which costs retains.
        for index in commands.indices { capacity += commands[index].respCapacityEstimate }
        var wire: [UInt8] = []
        wire.reserveCapacity(capacity)
        for index in commands.indices { commands[index].appendRESP(to: &wire) }
        try appendWire(wire, count: commands.count)
    }

    private func appendWire(_ wire: [UInt8], count: Int) throws(RedisError) {
        let status = wire.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { redisAppendFormattedCommand(context, $0.baseAddress, $0.count) }
        }
        if status != REDIS_OK {
            throw RedisError(code: .io, message: "queueing \(count) commands for \(endpoint) failed: \(errorText)")
        }
    }

    /// Sends whatever is queued (first call only) and reads the next reply. A server error
    /// reply is that command's `.failure`; a broken connection throws.
    func readReply(for label: @autoclosure () -> String) throws(RedisError) -> Result<RedisValue, RedisError> {
        var raw: UnsafeMutableRawPointer?
        if redisGetReply(context, &raw) != REDIS_OK {
            let savedErrno = errno
            throw failure(label(), errno: savedErrno)
        }
        guard let raw else {
            throw RedisError(code: .protocol, message: "no reply to \(label()) from \(endpoint)")
        }
        defer { freeReplyObject(raw) }
        let reply = raw.assumingMemoryBound(to: redisReply.self)
        if reply.pointee.type == REDIS_REPLY_ERROR {
            let text = String(decoding: Self.bytes(reply), as: UTF8.self)
            return .failure(.server(reply: text, command: label(), endpoint: endpoint))
        }
        return .success(Self.decode(reply))
    }

    /// Sends whatever is queued (first call only) and reads the next reply without converting
    /// it; the caller owns it and frees it with `HiredisContext.free`. A broken connection
    /// throws; a server error is an error reply like any other.
    func readReplyReference(for label: @autoclosure () -> String) throws(RedisError) -> RedisReplyReference {
        var raw: UnsafeMutableRawPointer?
        if redisGetReply(context, &raw) != REDIS_OK {
            let savedErrno = errno
            throw failure(label(), errno: savedErrno)
        }
        guard let raw else {
            throw RedisError(code: .protocol, message: "no reply to \(label()) from \(endpoint)")
        }
        return RedisReplyReference(raw.assumingMemoryBound(to: redisReply.self))
    }

    /// Writes everything queued by `append` now, without reading. `redisGetReply` writes the
    /// queue only when no reply is buffered yet, so a read-ahead command appended while the
    /// previous reply already sits in hiredis's reader would otherwise wait for a later read.
    func flush(for label: @autoclosure () -> String) throws(RedisError) {
        var done: Int32 = 0
        while done == 0 {
            if redisBufferWrite(context, &done) != REDIS_OK {
                let savedErrno = errno
                throw failure(label(), errno: savedErrno)
            }
        }
    }

    static func free(_ reply: RedisReplyReference) {
        freeReplyObject(reply.reply)
    }

    private func failure(_ label: String, errno savedErrno: Int32) -> RedisError {
        let kind = context.pointee.err
        let text = errorText
        if kind == REDIS_ERR_IO && (savedErrno == EAGAIN || savedErrno == EWOULDBLOCK) {
            return RedisError(code: .timeout, message: "\(label) on \(endpoint) timed out waiting for a reply")
        }
        if kind == REDIS_ERR_PROTOCOL {
            return RedisError(code: .protocol, message: "\(label) on \(endpoint): \(text)")
        }
        return RedisError(code: .io, message: "\(label) on \(endpoint): \(text)")
    }

    private var errorText: String {
        withUnsafeBytes(of: context.pointee.errstr) { raw in
            let bytes = raw.prefix(while: { $0 != 0 })
            return String(decoding: bytes, as: UTF8.self)
        }
    }

    private static func bytes(_ reply: UnsafeMutablePointer<redisReply>) -> [UInt8] {
        guard let str = reply.pointee.str, reply.pointee.len > 0 else { return [] }
        return Array(UnsafeRawBufferPointer(start: str, count: reply.pointee.len))
    }

    private static func decode(_ reply: UnsafeMutablePointer<redisReply>) -> RedisValue {
        switch reply.pointee.type {
        case REDIS_REPLY_STRING:
            return .bulkString(bytes(reply))
        case REDIS_REPLY_STATUS:
            return .simpleString(String(decoding: bytes(reply), as: UTF8.self))
        case REDIS_REPLY_ERROR:
            return .error(String(decoding: bytes(reply), as: UTF8.self))
        case REDIS_REPLY_INTEGER:
            return .integer(Int(reply.pointee.integer))
        case REDIS_REPLY_ARRAY:
            let count = reply.pointee.elements
            guard count > 0, let elements = reply.pointee.element else { return .array([]) }
            var values: [RedisValue] = []
            values.reserveCapacity(count)
            for index in 0..<count {
                if let element = elements[index] { values.append(decode(element)) } else { values.append(.null) }
            }
            return .array(values)
        default:
            return .null
        }
    }
}

extension timeval {
    fileprivate init(seconds: Double) {
        let whole = seconds.rounded(.down)
        self.init(tv_sec: .init(whole), tv_usec: .init((seconds - whole) * 1_000_000))
    }
}

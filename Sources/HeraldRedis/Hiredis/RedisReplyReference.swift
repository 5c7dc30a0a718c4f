import CHiredis

/// A reply as hiredis parsed it, read in place: nothing is copied or allocated to look at it.
///
/// Only valid inside the closure of `RedisConnection.withPipelineRepliesBlocking`, which frees
/// the replies when it returns; copy out whatever must outlive it. The hot path uses this to
/// read thousands of set members and views per round trip without turning each into an array.
public struct RedisReplyReference {
    let reply: UnsafeMutablePointer<redisReply>

    init(_ reply: UnsafeMutablePointer<redisReply>) {
        self.reply = reply
    }

    public var isError: Bool { reply.pointee.type == REDIS_REPLY_ERROR }
    public var isNull: Bool { reply.pointee.type == REDIS_REPLY_NIL }
    public var isArray: Bool { reply.pointee.type == REDIS_REPLY_ARRAY }

    /// The bytes of a bulk string, status or error reply; nil for other kinds (and for nil).
    public var bytes: UnsafeRawBufferPointer? {
        switch reply.pointee.type {
        case REDIS_REPLY_STRING, REDIS_REPLY_STATUS, REDIS_REPLY_ERROR:
            guard let str = reply.pointee.str else { return UnsafeRawBufferPointer(start: nil, count: 0) }
            return UnsafeRawBufferPointer(start: str, count: reply.pointee.len)
        default:
            return nil
        }
    }

    /// An integer reply's value.
    public var integer: Int? {
        reply.pointee.type == REDIS_REPLY_INTEGER ? Int(reply.pointee.integer) : nil
    }

    /// Elements of an array reply; 0 for any other kind.
    public var count: Int {
        reply.pointee.type == REDIS_REPLY_ARRAY ? Int(reply.pointee.elements) : 0
    }

    /// Element `index` of an array reply (`index < count`).
    public subscript(index: Int) -> RedisReplyReference {
        precondition(index >= 0 && index < count, "reply element \(index) of \(count)")
        return RedisReplyReference(reply.pointee.element[index]!)
    }

    /// An error reply as the `RedisError` a copying read would have produced.
    func error(command: String, endpoint: String) -> RedisError? {
        guard isError, let bytes else { return nil }
        return .server(reply: String(decoding: bytes, as: UTF8.self), command: command, endpoint: endpoint)
    }
}

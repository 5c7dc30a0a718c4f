/// The life of one `RedisConnection` as a value: whether it holds a usable socket, when to
/// connect, how long to back off between attempts, whether a failed command is sent again,
/// and which Lua scripts the server has. `RedisConnection` does the I/O and asks this value
/// what to do next, under its lock; the rules are tested here without a server.
///
/// `Socket` is hiredis's context in production and any value in tests.
struct RedisConnectionStateMachine<Socket> {
    enum State {
        /// No socket: never connected, or the last one failed and is rebuilt on next use.
        case disconnected
        case connected(Socket)
        /// `close()` was called; every later command fails.
        case closed
    }

    private(set) var state: State = .disconnected
    private(set) var statistics = RedisConnection.Statistics()
    /// Scripts loaded on the current socket (a new socket starts with none known).
    private(set) var loadedScripts: Set<String> = []
    private var hasConnectedBefore = false

    let connectAttempts: Int
    let initialBackoff: Double
    let maximumBackoff: Double

    init(connectAttempts: Int, initialBackoff: Double, maximumBackoff: Double) {
        self.connectAttempts = max(1, connectAttempts)
        self.initialBackoff = initialBackoff
        self.maximumBackoff = maximumBackoff
    }

    /// What a command does first.
    enum Acquire {
        /// Use this socket (after checking it is still usable; see `socketLost()`).
        case use(Socket)
        /// Open a socket, attempt by attempt (`connectFailed`), then `connected`.
        case connect
        /// The connection is closed.
        case fail
    }

    func acquire() -> Acquire {
        switch state {
        case .connected(let socket): .use(socket)
        case .disconnected: .connect
        case .closed: .fail
        }
    }

    /// The socket was found broken or hung up before anything was written on it.
    mutating func socketLost() {
        if case .connected = state { state = .disconnected }
        loadedScripts.removeAll()
    }

    /// A socket is open; returns whether it replaces an earlier one (a reconnect).
    @discardableResult
    mutating func connected(_ socket: Socket) -> Bool {
        let isReconnect = hasConnectedBefore
        if isReconnect { statistics.reconnects += 1 }
        hasConnectedBefore = true
        loadedScripts.removeAll()
        state = .connected(socket)
        return isReconnect
    }

    enum AfterConnectFailure: Equatable {
        /// Wait this many seconds, then try again.
        case retry(after: Double)
        /// Stop trying: the attempts are used up, or the server refused us (a wrong password
        /// or database), which waiting will not mend.
        case giveUp
    }

    /// Attempt `attempt` (from 1) failed with `error`.
    func connectFailed(attempt: Int, error: RedisError) -> AfterConnectFailure {
        if error.code == .server || attempt >= connectAttempts { return .giveUp }
        return .retry(after: min(initialBackoff * Double(1 << min(attempt - 1, 30)), maximumBackoff))
    }

    enum AfterCommandFailure: Equatable {
        /// Reconnect and send the command again.
        case retry
        /// Report the error to the caller.
        case fail
    }

    /// A command failed with `error` that broke the connection. It is sent again once only
    /// when it cannot have changed anything (read-only) and the socket failed (not a timeout,
    /// after which the server may still be working on it).
    mutating func commandFailed(_ error: RedisError, readOnly: Bool, alreadyRetried: Bool) -> AfterCommandFailure {
        socketLost()
        guard error.code == .io, readOnly, !alreadyRetried else { return .fail }
        statistics.retries += 1
        return .retry
    }

    /// `SCRIPT LOAD` of `sha1` succeeded on the current socket.
    mutating func scriptLoaded(_ sha1: String) { loadedScripts.insert(sha1) }

    /// A NOSCRIPT reply: the server lost its scripts (`SCRIPT FLUSH`, a restart behind a proxy).
    mutating func scriptsFlushed() { loadedScripts.removeAll() }

    mutating func scriptReloaded() { statistics.scriptReloads += 1 }

    mutating func close() {
        state = .closed
        loadedScripts.removeAll()
    }
}

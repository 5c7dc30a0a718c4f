import Foundation
import HeraldRedis

/// What one Redis master did during a measurement: the CPU seconds it used (`INFO cpu`) and
/// the commands it ran (`INFO commandstats`, reset just before). On a cluster there is one
/// per master, so the report shows how the fan-out's Redis work was split between them.
public struct RedisNodeUsage: Sendable, Codable, Hashable {
    /// `host:port` of the master.
    public var endpoint: String
    /// User plus system CPU of the server process over the measurement; nil when the master
    /// was not there at the start (a failover).
    public var cpuSeconds: Double?
    /// The commands it ran, most expensive first.
    public var commands: [Command]

    public struct Command: Sendable, Codable, Hashable {
        /// Lower-case, as `INFO commandstats` names it (`hgetall`, `evalsha`, `xadd`, ...).
        public var name: String
        public var calls: Int
        /// Time Redis spent executing them (not waiting for the network).
        public var microseconds: Int
    }

    public var calls: Int { commands.reduce(0) { $0 + $1.calls } }
    public var commandMicroseconds: Int { commands.reduce(0) { $0 + $1.microseconds } }

    /// Reads every master before and after a measurement.
    struct Meter {
        let redis: RedisConfiguration

        /// Resets every master's command statistics and returns its CPU seconds so far.
        func start() async throws -> [String: Double] {
            let connection = RedisConnection(configuration: redis)
            defer { connection.close() }
            _ = try await connection.sendToEveryMaster(RedisCommand("CONFIG", "RESETSTAT"))
            var cpu: [String: Double] = [:]
            for (endpoint, reply) in try await connection.sendToEveryMaster(.info("cpu")) {
                cpu[endpoint] = RedisNodeUsage.cpuSeconds(info: reply.string ?? "")
            }
            return cpu
        }

        func finish(_ started: [String: Double]) async throws -> [RedisNodeUsage] {
            let connection = RedisConnection(configuration: redis)
            defer { connection.close() }
            let cpu = try await connection.sendToEveryMaster(.info("cpu"))
            let commands = try await connection.sendToEveryMaster(.info("commandstats"))
            return commands.map { endpoint, reply in
                let now = cpu.first { $0.endpoint == endpoint }.flatMap { RedisNodeUsage.cpuSeconds(info: $0.reply.string ?? "") }
                return RedisNodeUsage(
                    endpoint: endpoint,
                    cpuSeconds: now.flatMap { now in started[endpoint].map { now - $0 } },
                    commands: RedisNodeUsage.commands(info: reply.string ?? "")
                )
            }.sorted { $0.endpoint < $1.endpoint }
        }
    }

    /// `used_memory` summed over every master, in bytes.
    static func usedMemory(_ redis: RedisConfiguration) async throws -> Int {
        let connection = RedisConnection(configuration: redis)
        defer { connection.close() }
        var total = 0
        for (_, reply) in try await connection.sendToEveryMaster(.info("memory")) {
            total += infoFields(reply.string ?? "")["used_memory"].flatMap { Int($0) } ?? 0
        }
        return total
    }

    /// `used_cpu_user + used_cpu_sys` of an `INFO cpu` reply.
    static func cpuSeconds(info: String) -> Double? {
        let fields = infoFields(info)
        guard let user = fields["used_cpu_user"].flatMap(Double.init), let system = fields["used_cpu_sys"].flatMap(Double.init)
        else { return nil }
        return user + system
    }

    /// The `cmdstat_<name>:calls=N,usec=N,...` lines of an `INFO commandstats` reply, most
    /// time first.
    static func commands(info: String) -> [Command] {
        infoFields(info).compactMap { key, value -> Command? in
            guard key.hasPrefix("cmdstat_") else { return nil }
            var numbers: [Substring: Int] = [:]
            for pair in value.split(separator: ",") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                if parts.count == 2, let number = Int(parts[1]) { numbers[parts[0]] = number }
            }
            guard let calls = numbers["calls"], let microseconds = numbers["usec"] else { return nil }
            return Command(name: String(key.dropFirst("cmdstat_".count)), calls: calls, microseconds: microseconds)
        }.sorted { ($0.microseconds, $0.name) > ($1.microseconds, $1.name) }
    }

    /// The `name:value` lines of an `INFO` reply.
    static func infoFields(_ info: String) -> [String: String] {
        var fields: [String: String] = [:]
        for line in info.split(whereSeparator: \.isNewline) where !line.hasPrefix("#") {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2 { fields[String(parts[0])] = parts[1].trimmingCharacters(in: .whitespaces) }
        }
        return fields
    }
}

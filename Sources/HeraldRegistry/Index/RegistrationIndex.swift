import Foundation
import HeraldDomain
import HeraldRedis
import Logging

/// The Redis side of the registry: applies changes with the layout's Lua scripts and answers
/// lookups, listings, version reservations and expiry sweeps. docs/redis-layout.md is the
/// specification of every key touched here.
///
/// Methods throw `RedisError` for Redis failures; `RegistrationService` maps them to
/// `RegistryError.unavailable`.
public final class RegistrationIndex: Sendable {
    public let layout: SlotLayout
    public let pool: RedisConnectionPool
    let logger: Logger

    public init(pool: RedisConnectionPool, layout: SlotLayout, logger: Logger = Logger(label: "herald.registry.index")) {
        self.pool = pool
        self.layout = layout
        self.logger = logger
    }

    /// The index of `hub`'s registrations, on the same Redis.
    public func hub(_ hub: HubName) -> RegistrationIndex {
        hub == layout.hub ? self : RegistrationIndex(pool: pool, layout: layout.hub(hub), logger: logger)
    }

    /// The hubs the index holds registrations of: the default hub and every hub in
    /// `herald:hubs`, sorted.
    public func hubs() async throws -> [HubName] {
        let members = try await pool.withConnection { try await $0.send(RedisCommand("SMEMBERS", layout.hubsKey, isReadOnly: true)) }
        let named = (members.array ?? []).compactMap { $0.string.flatMap(HubName.init) }
        return [.default] + Set(named).subtracting([.default]).sorted()
    }

    /// Applies records of any hubs: each hub's changes in their order on that hub's keys,
    /// after noting the hubs in `herald:hubs`. One applied/ignored flag per record, in order.
    public func apply(_ records: [RegistryRecord], now: Date = Date()) async throws -> [Bool] {
        var positions: [HubName: [Int]] = [:]
        for (position, record) in records.enumerated() { positions[record.hub, default: []].append(position) }
        let others = positions.keys.filter { !$0.isDefault }
        if !others.isEmpty {
            let command = RedisCommand("SADD", arguments: [layout.hubsKey] + others.map(\.rawValue))
            _ = try await pool.withConnection { try await $0.send(command) }
        }
        var flags = Array(repeating: false, count: records.count)
        for (hub, indices) in positions {
            let applied = try await self.hub(hub).apply(indices.map { records[$0].change }, now: now)
            for (index, flag) in zip(indices, applied) { flags[index] = flag }
        }
        return flags
    }

    // MARK: Meta

    /// Records this deployment's slot count in `herald:meta` if absent, and refuses to go on
    /// when another slot count (or layout version) is recorded: ids would hash to other slots
    /// and every lookup would miss.
    public func checkMeta() async throws {
        let key = layout.metaKey
        let replies = try await pool.withConnection { connection in
            try await connection.pipeline([
                RedisCommand("HSETNX", key, "slots", layout.slotCount),
                RedisCommand("HSETNX", key, "layout", SlotLayout.layoutVersion),
                .hgetall(key),
            ])
        }
        let fields = try replies[2].get().fieldValuePairs ?? [:]
        let slots = fields["slots"]?.int
        let version = fields["layout"]?.int
        guard slots == layout.slotCount, version == SlotLayout.layoutVersion else {
            throw RegistryMetaMismatch(
                message: "\(key) records slots=\(slots.map(String.init) ?? "?") layout=\(version.map(String.init) ?? "?"); "
                    + "this process uses slots=\(layout.slotCount) layout=\(SlotLayout.layoutVersion). "
                    + "The slot count is fixed per deployment: use the recorded one, or reindex into an empty Redis."
            )
        }
    }

    // MARK: Applying changes

    /// The commands that apply `change`. The script's reply is the last command's.
    ///
    /// A template body is written (SET NX, content addressed, so never changed) before the
    /// script that makes a view point at it, so a reader never finds a view whose template
    /// is missing. The template key has no slot hash tag; on Redis Cluster it is its own
    /// single-key command, which is why it is not inside the script.
    public func commands(for change: RegistryChange, nowSeconds: Int64) -> [RedisCommand] {
        let slot = layout.slot(of: change.slotId)
        let prefix = layout.slotPrefix(slot)
        switch change {
        case .registration(let entry):
            var commands: [RedisCommand] = []
            if let template = templateCommand(entry) { commands.append(template) }
            var arguments: [any RedisArgument] = [
                entry.id, entry.version, entry.document, entry.view.encoded, entry.handle,
                entry.view.expiresAtEpochSeconds.map(String.init) ?? "", nowSeconds, entry.tags.count,
            ]
            arguments.append(contentsOf: entry.tags as [any RedisArgument])
            commands.append(Self.script(RegistryScripts.apply, prefix: prefix, arguments: arguments))
            return commands
        case .registrationDeleted(let id, let version):
            return [Self.script(RegistryScripts.apply, prefix: prefix, arguments: [id, version, "", "", "", "", nowSeconds, 0])]
        case .installation(let id, let version, let document):
            return [Self.script(RegistryScripts.applyInstallation, prefix: prefix, arguments: [id, version, document])]
        case .installationDeleted(let id, let version):
            return [Self.script(RegistryScripts.applyInstallation, prefix: prefix, arguments: [id, version, ""])]
        }
    }

    /// A registry script on the slot of `prefix`. It declares two keys of the slot that never
    /// exist, the prefix and the guard `prefix~`, and builds the slot's other keys itself. Two
    /// missing keys make Redis Cluster answer `TRYAGAIN` while the slot is half migrated
    /// (with one, the target would run the script against a half-moved slot after `ASK`), so
    /// the client waits until the slot is whole on one node.
    static func script(_ script: RedisScript, prefix: String, arguments: [any RedisArgument]) -> RedisCommand {
        var command = RedisCommand.evalScript(script, keys: [prefix, prefix + "~"], arguments: [String]())
        for argument in arguments { command.append(argument) }
        return command
    }

    /// The SET NX of `entry`'s template body (content addressed, so never changed), if it has one.
    func templateCommand(_ entry: IndexedRegistration) -> RedisCommand? {
        entry.templateJSON.map { .set(layout.templateKey(entry.view.templateKey), $0, onlyIfAbsent: true) }
    }

    /// Writes the template bodies of `changes` that are missing (SET NX), and nothing else.
    public func restoreTemplates(of changes: [RegistryChange]) async throws {
        let commands: [RedisCommand] = changes.compactMap { change in
            guard case .registration(let entry) = change else { return nil }
            return templateCommand(entry)
        }
        guard !commands.isEmpty else { return }
        for reply in try await pool.withConnection({ try await $0.pipeline(commands) }) { _ = try reply.get() }
    }

    /// Applies one change atomically; true when applied, false when it was older than (or
    /// the same as) what the index holds.
    @discardableResult
    public func apply(_ change: RegistryChange, now: Date = Date()) async throws -> Bool {
        try await apply([change], now: now)[0]
    }

    /// Applies changes in one pipeline, in order; one applied/ignored flag per change. The
    /// template bodies go ahead of all the scripts, so no view points at a missing template.
    public func apply(_ changes: [RegistryChange], now: Date = Date()) async throws -> [Bool] {
        if changes.isEmpty { return [] }
        let nowSeconds = Int64(now.timeIntervalSince1970)
        var templates: [RedisCommand] = []
        var scripts: [RedisCommand] = []
        scripts.reserveCapacity(changes.count)
        for change in changes {
            let commands = self.commands(for: change, nowSeconds: nowSeconds)
            templates.append(contentsOf: commands.dropLast())
            scripts.append(commands[commands.count - 1])
        }
        let replies = try await pool.withConnection { connection in
            guard connection.configuration.cluster != nil, !templates.isEmpty else {
                return try await connection.pipeline(templates + scripts).suffix(scripts.count)
            }
            // On a cluster a pipeline keeps its order per master only, and a template key
            // lives on another master than its view: the templates go first, on their own.
            for reply in try await connection.pipeline(templates) { _ = try reply.get() }
            return try await connection.pipeline(scripts)[...]
        }
        return try replies.map { result in
            let reply = try result.get()
            guard let flag = reply.int else {
                throw RedisError(code: .unexpectedReply, message: "apply script answered \(reply), expected 0 or 1")
            }
            return flag == 1
        }
    }
}

/// `herald:meta` names another slot count or layout than this process uses.
public struct RegistryMetaMismatch: Error, Sendable, CustomStringConvertible {
    public var code: String { "slot_layout_mismatch" }
    public var message: String
    public var description: String { "\(code): \(message)" }
}

/// The outcome of reserving a version for a write (`reserve` script).
public enum VersionReservation: Sendable, Hashable {
    /// Write with this version.
    case reserved(Int64)
    /// `If-Match` named another version than the current one (412).
    case preconditionFailed(current: Int64)
    /// Another conditional write reserved a newer version that is still on its way (409).
    case conflict(inFlight: Int64)
    /// The id was deleted (410).
    case gone
}

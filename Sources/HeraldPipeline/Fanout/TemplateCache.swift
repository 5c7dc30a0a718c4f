import Foundation
import HeraldDomain
import HeraldRedis
import HeraldRegistry

/// A registration template as the fan-out uses it: compiled once per process.
struct CachedTemplate: Sendable {
    var name: String
    var body: CompiledTemplate
    /// Header templates (`apns-push-type: alert`), compiled as text.
    var headers: [(name: String, value: CompiledTemplate)]
}

/// The templates under `herald:tpl:<key>`, fetched and compiled at most once per process.
///
/// Template entries are content addressed and immutable (a changed template gets a new key),
/// so nothing is ever invalidated. The number of distinct templates is usually small (one per
/// language and platform in the seed), but registrations may each bring their own: past
/// `capacity` entries, the least recently used half is dropped and compiled again when met.
final class TemplateCache: Sendable {
    enum Entry: Sendable {
        case template(CachedTemplate)
        /// The key is missing in Redis or its body does not compile; counted as failed.
        case unusable(String)
    }

    private let layout: SlotLayout
    let capacity: Int
    private let lock = NSLock()
    nonisolated(unsafe) private var entries: [String: (entry: Entry, used: UInt64)] = [:]
    nonisolated(unsafe) private var clock: UInt64 = 0

    init(layout: SlotLayout, capacity: Int = 20_000) {
        self.layout = layout
        self.capacity = max(2, capacity)
    }

    var count: Int { lock.withLock { entries.count } }

    /// The template for `key`, fetching it with `connection` (blocking) on first use.
    func template(key: String, connection: RedisConnection) throws -> Entry {
        if let cached = lock.withLock({ () -> Entry? in
            guard let found = entries[key] else { return nil }
            clock &+= 1
            entries[key]!.used = clock
            return found.entry
        }) {
            return cached
        }
        let reply = try connection.sendBlocking(.get(layout.templateKey(key)))
        let entry: Entry
        if let bytes = reply.bytes {
            entry = Self.compile(bytes, key: key)
        } else {
            // Do not cache absence: the indexer writes the template before the view, so a
            // miss is a race with a reindex or a flushed Redis and may heal.
            return .unusable("template \(key) is missing from Redis")
        }
        store(entry, key: key)
        return entry
    }

    /// Fetches and compiles, in one pipeline, those of `keys` that are not cached: a page of
    /// devices spread over many templates this process has not met costs one round trip
    /// instead of one per template. Returns how many were fetched.
    @discardableResult
    func prefetch(_ keys: [String], connection: RedisConnection) throws -> Int {
        let missing = lock.withLock { keys.filter { entries[$0] == nil } }
        guard !missing.isEmpty else { return 0 }
        let replies = try connection.pipelineBlocking(missing.map { .get(layout.templateKey($0)) })
        for (key, reply) in zip(missing, replies) {
            // A missing or failed one is left to `template(key:connection:)`, which says why.
            guard case .success(let value) = reply, let bytes = value.bytes else { continue }
            store(Self.compile(bytes, key: key), key: key)
        }
        return missing.count
    }

    /// Keeps `entry`, first dropping the least recently used half when the cache is full.
    func store(_ entry: Entry, key: String) {
        lock.withLock {
            if entries.count >= capacity {
                let keep = entries.sorted { $0.value.used > $1.value.used }.prefix(capacity / 2)
                entries = Dictionary(uniqueKeysWithValues: keep.map { ($0.key, $0.value) })
            }
            clock &+= 1
            entries[key] = (entry, clock)
        }
    }

    static func compile(_ bytes: [UInt8], key: String) -> Entry {
        guard let root = try? JSONValue.parse(bytes), case .string(let name)? = root["name"], case .string(let body)? = root["body"] else {
            return .unusable("template \(key) is not a {name, body} JSON object")
        }
        do {
            let compiled = try CompiledTemplate.compile(body, format: CompiledTemplate.detectFormat(body))
            var headers: [(name: String, value: CompiledTemplate)] = []
            if case .object(let members)? = root["headers"] {
                for member in members {
                    guard case .string(let text) = member.value else { continue }
                    headers.append((member.key, try CompiledTemplate.compile(text, format: .text)))
                }
            }
            return .template(CachedTemplate(name: name, body: compiled, headers: headers))
        } catch {
            return .unusable("template \(key) (\(name)) does not compile: \(error)")
        }
    }
}

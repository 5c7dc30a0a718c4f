/// Where a registration lives in Redis: its slot and the keys of that slot.
///
/// All keys of one slot share the hash tag `{slot}`, so the Lua scripts that apply a change stay
/// on one Redis Cluster node. See docs/redis-layout.md for the whole layout.
public struct SlotLayout: Sendable, Hashable {
    /// Number of slots; fixed for the life of a deployment.
    public let slotCount: Int
    /// Key prefix, `herald` by default.
    public let prefix: String

    public static let defaultSlotCount = 256
    /// 2: fan-out views in one hash per slot (`views`); 1 had a string key per registration.
    public static let layoutVersion = 2

    public init(slotCount: Int = SlotLayout.defaultSlotCount, prefix: String = "herald") {
        precondition(slotCount > 0 && slotCount <= 16_384, "slot count must be in 1...16384")
        self.slotCount = slotCount
        self.prefix = prefix
    }

    /// The slot of a registration or installation id. Ids of the form `<installation>:<template>`
    /// hash on the installation part so an installation's registrations share one slot.
    public func slot(of id: String) -> Int {
        var hash: UInt32 = 0x811C_9DC5
        for byte in id.utf8 {
            if byte == UInt8(ascii: ":") { break }
            hash ^= UInt32(byte)
            hash = hash &* 0x0100_0193
        }
        return Int(hash % UInt32(slotCount))
    }

    /// `herald:{17}:` — the prefix every key of slot 17 starts with.
    public func slotPrefix(_ slot: Int) -> String { "\(prefix):{\(slot)}:" }

    public func documentKey(slot: Int, id: String) -> String { slotPrefix(slot) + "doc:" + id }
    /// The hash of the slot's fan-out views: registration id -> view line.
    public func viewsKey(slot: Int) -> String { slotPrefix(slot) + "views" }
    public func tagKey(slot: Int, tag: String) -> String { slotPrefix(slot) + "tag:" + tag }
    public func allKey(slot: Int) -> String { slotPrefix(slot) + "all" }
    public func handleKey(slot: Int, handle: String) -> String { slotPrefix(slot) + "handle:" + handle }
    public func expiryKey(slot: Int) -> String { slotPrefix(slot) + "exp" }
    public func versionKey(slot: Int) -> String { slotPrefix(slot) + "ver" }
    public func leaseKey(slot: Int) -> String { slotPrefix(slot) + "lease" }
    public func goneKey(slot: Int) -> String { slotPrefix(slot) + "gone" }
    public func installationKey(slot: Int, installationId: String) -> String {
        slotPrefix(slot) + "inst:" + installationId
    }
    public func temporaryKey(slot: Int, task: String, step: Int) -> String {
        slotPrefix(slot) + "tmp:" + task + ":" + String(step)
    }
    public func templateKey(_ contentKey: String) -> String { "\(prefix):tpl:" + contentKey }
    public var metaKey: String { "\(prefix):meta" }
    public func eventClaimKey(eventId: String) -> String { "\(prefix):event:" + eventId }
    public func statusKey(eventId: String) -> String { "\(prefix):status:" + eventId }
    public func progressKey(eventId: String) -> String {
        slotPrefix(slot(of: eventId)) + "progress:" + eventId
    }
}

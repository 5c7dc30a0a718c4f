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
    /// 4: views carry the registration's tags (`RegistrationView`), so a slot's packs can be
    /// filtered by a tag expression; 3 had views without tags, 2 one hash field per
    /// registration (`views`), 1 a string key per registration.
    public static let layoutVersion = 4
    /// Packs per slot: a registration's view lives in field `pack(of: id)` of the slot's
    /// `packs` hash. Fixed by the layout version (the Lua scripts compute the same number).
    public static let packsPerSlot = 256

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

    /// The pack (field of the slot's `packs` hash) holding the view of `id`:
    /// `h = (h * 33 + byte) mod (2^31 - 1)` over the id's UTF-8 bytes from `h = 5381`, then
    /// `h mod packsPerSlot`. Every step is exact in Lua's doubles, so the scripts compute the same.
    public static func pack<Bytes: Sequence>(of id: Bytes) -> Int where Bytes.Element == UInt8 {
        var hash: UInt64 = 5_381
        for byte in id { hash = (hash &* 33 &+ UInt64(byte)) % 2_147_483_647 }
        return Int(hash % UInt64(packsPerSlot))
    }

    public static func pack(of id: String) -> Int { pack(of: id.utf8) }

    /// The field name of pack `index` in a `packs` hash: the index in decimal.
    public static func packField(_ index: Int) -> String { packFields[index] }
    /// Every pack's field name, by index.
    public static let packFields: [String] = (0..<packsPerSlot).map { String($0) }

    /// `herald:{17}:` — the prefix every key of slot 17 starts with.
    public func slotPrefix(_ slot: Int) -> String { "\(prefix):{\(slot)}:" }

    public func documentKey(slot: Int, id: String) -> String { slotPrefix(slot) + "doc:" + id }
    /// The hash of the slot's fan-out views in packs: pack index -> `ViewPack` bytes.
    public func packsKey(slot: Int) -> String { slotPrefix(slot) + "packs" }
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
    /// The sender's outcome counts of an event (`<platform>:<outcome>` fields), with the
    /// offsets already counted per deliveries partition (`applied:<partition>`).
    public func pushCountsKey(eventId: String) -> String {
        slotPrefix(slot(of: eventId)) + "push:" + eventId
    }
    /// The sender's sent-markers of an event's deliveries (field: delivery id, value: the
    /// receipt), kept from the service's answer to the commit of the receipt.
    public func sentMarkersKey(eventId: String) -> String {
        slotPrefix(slot(of: eventId)) + "sent:" + eventId
    }
}

import HeraldDomain

/// Where a registration lives in Redis: its slot and the keys of that slot.
///
/// All keys of one slot share the hash tag `{slot}`, so the Lua scripts that apply a change stay
/// on one Redis Cluster node. See docs/redis-layout.md for the whole layout.
public struct SlotLayout: Sendable, Hashable {
    /// Number of slots; fixed for the life of a deployment.
    public let slotCount: Int
    /// The deployment's key prefix, `herald` by default: the meta hash and the scheduler's
    /// partition keys live under it.
    public let prefix: String
    /// The hub whose keys this layout names (``hub(_:)``).
    public let hub: HubName
    /// Every key of the hub starts with this: the deployment's prefix for the default hub,
    /// `<prefix>@<hub>` for the others (`@` is in no hub name), so a single-hub deployment's
    /// keys are the default hub's as they stand and no hub's keys match another's pattern.
    public let hubPrefix: String

    public static let defaultSlotCount = 256
    /// 6: a new registration takes a position in a pack of its *group* (the tags it carries
    /// that have a bitmap in the slot), so registrations with the same common tags share packs
    /// and an expression's audience fills whole packs. 5 gave out positions in arrival order;
    /// since 5 every live registration holds a position in its slot, views are packed by
    /// position (`positionsPerPack` to a pack), and tags on at least `bitmapThreshold`
    /// registrations of a slot have a bitmap over positions. 4 packed views by a hash of the id
    /// (256 packs per slot), 3 had views without tags, 2 one hash field per registration
    /// (`views`), 1 a string key per registration.
    public static let layoutVersion = 6
    /// Positions per pack: the view of the registration at position `p` lives in field
    /// `p / positionsPerPack` of the slot's `packs` hash. Fixed by the layout version (the Lua
    /// scripts use the same number).
    public static let positionsPerPack = 16
    /// A tag set of at least this many members in a slot always has a bitmap there (created
    /// when the set reaches it); a bitmap is removed once its set falls below half of it.
    public static let bitmapThreshold = 32
    /// A slot holds packs of this many groups, or of one group for every
    /// `registrationsPerGroup` registrations when that is more; a registration whose group would
    /// be one too many goes to the mixed group (`mixedGroup`). A group fills its open positions
    /// before it gets another pack, so this bounds the positions left empty: at most 15 per
    /// group, 960 in a small slot. A placement is kept for life, so a minimum too low for the
    /// registry's common tag combinations sends a slot's first registrations to the mixed group
    /// for good, where a narrow audience is scattered one or two to a pack.
    public static let groupsMinimum = 64
    public static let registrationsPerGroup = 32
    /// The group of a registration without a tag that has a bitmap, and of those that found
    /// the slot's groups all taken.
    public static let mixedGroup = "*"

    public init(slotCount: Int = SlotLayout.defaultSlotCount, prefix: String = "herald") {
        precondition(slotCount > 0 && slotCount <= 16_384, "slot count must be in 1...16384")
        self.slotCount = slotCount
        self.prefix = prefix
        self.hub = .default
        self.hubPrefix = prefix
    }

    private init(_ base: SlotLayout, hub: HubName) {
        self.slotCount = base.slotCount
        self.prefix = base.prefix
        self.hub = hub
        self.hubPrefix = hub.isDefault ? base.prefix : base.prefix + "@" + hub.rawValue
    }

    /// The same deployment's layout for the keys of `hub`.
    public func hub(_ hub: HubName) -> SlotLayout { hub == self.hub ? self : SlotLayout(self, hub: hub) }

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

    /// The pack (field of the slot's `packs` hash) holding the view at `position`.
    public static func pack(ofPosition position: Int) -> Int { position / positionsPerPack }

    /// The field name of pack `index` in a `packs` hash: the index in decimal.
    public static func packField(_ index: Int) -> String {
        index < commonPackFields.count ? commonPackFields[index] : String(index)
    }
    /// The field names of the first packs (a slot of up to 65,536 positions), made once.
    private static let commonPackFields: [String] = (0..<4_096).map { String($0) }

    /// `herald:{17}:` — the prefix every key of slot 17 starts with (`herald@sports:{17}:` in
    /// hub `sports`).
    public func slotPrefix(_ slot: Int) -> String { "\(hubPrefix):{\(slot)}:" }

    public func documentKey(slot: Int, id: String) -> String { slotPrefix(slot) + "doc:" + id }
    /// The hash of the slot's fan-out views in packs: pack index -> `ViewPack` bytes.
    public func packsKey(slot: Int) -> String { slotPrefix(slot) + "packs" }
    /// The hash of each live registration's position in the slot: id -> position.
    public func positionsKey(slot: Int) -> String { slotPrefix(slot) + "pos" }
    /// The bitmap of the slot's live positions.
    public func liveKey(slot: Int) -> String { slotPrefix(slot) + "live" }
    /// The bitmap of the positions of the registrations carrying `tag` (while the tag is on
    /// enough of the slot's registrations, `bitmapThreshold`).
    public func bitmapKey(slot: Int, tag: String) -> String { slotPrefix(slot) + "bits:" + tag }
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
    /// Templates are content addressed and immutable, so every hub shares them.
    public func templateKey(_ contentKey: String) -> String { "\(prefix):tpl:" + contentKey }
    /// The deployment's meta hash (slot count, layout, the index epoch of every hub).
    public var metaKey: String { "\(prefix):meta" }
    /// Set while a worker of the deployment fans out a breaking alert, whatever its hub: the
    /// deployment's registration writes wait while it is there (`AlertYield`).
    public var breakingKey: String { "\(prefix):breaking" }
    /// The deployment's set of hubs other than the default that the index holds
    /// registrations of (the indexer adds a hub when it applies its first change).
    public var hubsKey: String { "\(prefix):hubs" }
    public func eventClaimKey(eventId: String) -> String { "\(hubPrefix):event:" + eventId }
    public func statusKey(eventId: String) -> String { "\(hubPrefix):status:" + eventId }
    /// The hub's most recent events (member: event id, score: its publish time, else when it was
    /// accepted, in milliseconds since 1970), written by the planner, read by the console's list
    /// of alerts; rehearsals are left out.
    public var recentKey: String { "\(hubPrefix):recent" }
    /// Set when an event is stopped in flight (`DELETE /v1/notifications/{id}`): its tasks
    /// write no more deliveries.
    public func stopKey(eventId: String) -> String { "\(hubPrefix):stop:" + eventId }
    /// The ids of an event's corrections (`DerivedSend.correction`), which its status lists.
    public func correctionsKey(eventId: String) -> String { "\(hubPrefix):corrections:" + eventId }
    /// A rehearsal's previews (`RehearsalPreview`), one field per (platform, template).
    public func previewsKey(eventId: String) -> String { "\(hubPrefix):previews:" + eventId }
    /// The positions of the slot an event was delivered to (a bitmap, bit order as `live`), kept
    /// for the hub's longest frequency-cap window; under the index epoch, as a rebuilt index
    /// gives out positions anew.
    public func alertedKey(slot: Int, epoch: String, eventId: String) -> String {
        slotPrefix(slot) + "alerted:" + epoch + ":" + eventId
    }
    /// The hub's events that count for its frequency caps (member: event id, score: when it was
    /// first delivered, in milliseconds since 1970).
    public var alertsKey: String { "\(hubPrefix):alerts" }
    /// The set of content keys of the templates the hub has had since its `maxTemplates` was set.
    public var templatesKey: String { "\(hubPrefix):templates" }
    /// The hub's count of sends accepted in `minute` (minutes since 1970), for its `sendsPerMinute`.
    public func sendCountKey(minute: Int) -> String { "\(hubPrefix):sends:\(minute)" }
    public func progressKey(eventId: String) -> String {
        slotPrefix(slot(of: eventId)) + "progress:" + eventId
    }
    /// The sender's outcome counts of an event (`<platform>:<outcome>` fields), with the
    /// offsets already counted per deliveries partition (`applied:<partition>`).
    public func pushCountsKey(eventId: String) -> String {
        slotPrefix(slot(of: eventId)) + "push:" + eventId
    }
    /// The delivery ids of an event whose receipt was not `sent` (the sender adds them), which a
    /// correction leaves out: it goes to the devices the event reached.
    public func unsentKey(eventId: String) -> String {
        slotPrefix(slot(of: eventId)) + "unsent:" + eventId
    }
    /// An event's engagement counts (`EngagementFunnel.fields`): what its readers' apps reported.
    public func engagementsKey(eventId: String) -> String {
        slotPrefix(slot(of: eventId)) + "engagements:" + eventId
    }
    /// The devices that reported an engagement with the event (`<action>|<device>`): each counts once.
    public func engagedKey(eventId: String) -> String {
        slotPrefix(slot(of: eventId)) + "engaged:" + eventId
    }
    /// A test send's receipts by registration (field: registration id, value: the outcome, then
    /// a tab and the reason when there is one), for the answer to Azure's test send.
    public func testOutcomesKey(eventId: String) -> String {
        slotPrefix(slot(of: eventId)) + "tested:" + eventId
    }
    /// The sender's sent-markers of an event's deliveries (field: delivery id, value: the
    /// receipt), kept from the service's answer to the commit of the receipt.
    public func sentMarkersKey(eventId: String) -> String {
        slotPrefix(slot(of: eventId)) + "sent:" + eventId
    }
}

import Foundation
import HeraldDomain

/// The registrations a benchmark seeds: the seed tutorials' mix at any size, generated
/// deterministically from (seed, index) so they never need to be held in memory.
///
/// - the six seed categories World, Politics, Business, Technology, Science, Sports: every
///   registration follows one to three of them;
/// - APNs (55 %) and FCM (45 %) with realistic handles (64 hex digits; about 160-character
///   FCM tokens) and 32-hex-digit ids, the shape of issued ids;
/// - 95 % template registrations, English 50 %, French 25 %, Mandarin 25 %
///   (`{"aps":{"alert":"$(News_<Lang>)"},"inAppMessage":"$(News_<Lang>)"}` and the FCM
///   equivalent), 5 % native;
/// - 20 % carry a `$UserId:{u<n>}` tag (users own one to a few devices);
/// - 1.5 % carry `Region_Nordic`, a region's readers: `Region_Nordic && !Sports` selects
///   1 % of the devices (a third of them follow Sports);
/// - the first `latencyUsers` registrations belong to users `bench-lat-<i>` alone (targets of
///   the one-recipient latency events), and one in 997 carries `BenchWarmup` (the warm-up
///   event's audience, spread over many slots so it takes the bulk lane).
public struct SeedPopulation: Sendable {
    public static let categories = ["World", "Politics", "Business", "Technology", "Science", "Sports"]
    public static let languages = ["English", "French", "Mandarin"]
    public static let templateName = "newsTemplate"
    public static let warmupTag = "BenchWarmup"
    public static let regionTag = "Region_Nordic"
    /// Registrations in a thousand that carry `regionTag`.
    public static let regionPerMille = 15

    public let count: Int
    public let seed: UInt64
    public let latencyUsers: Int
    /// Nil: the seed's six templates (a language on a platform). Otherwise each template
    /// carries an `edition` of `index % templateVariants`, so the population holds about six
    /// times as many distinct templates (`distinctTemplates`), each on a share of the devices.
    public let templateVariants: Int?
    /// The hub every registration belongs to (seeded under `SlotLayout.hub(_:)` of it).
    public let hub: HubName

    public init(count: Int, seed: UInt64, latencyUsers: Int = 200, templateVariants: Int? = nil, hub: HubName = .default) {
        self.count = count
        self.seed = seed
        self.latencyUsers = min(latencyUsers, count)
        self.templateVariants = templateVariants.map { max(1, $0) }
        self.hub = hub
    }

    /// The compact facts about one registration that decide who receives what.
    public struct Profile: Sendable, Hashable {
        /// Bit `i` set: follows `categories[i]`.
        public var categories: UInt8
        public var platform: Platform
        /// Index into `languages`; nil for a native registration.
        public var language: Int?
        public var userTag: String?
        public var warmup: Bool
        public var region = false

        public var tags: [String] {
            var tags: [String] = []
            for (bit, category) in SeedPopulation.categories.enumerated() where categories & (1 << bit) != 0 {
                tags.append(category)
            }
            if region { tags.append(SeedPopulation.regionTag) }
            if let userTag { tags.append(userTag) }
            if warmup { tags.append(SeedPopulation.warmupTag) }
            return tags
        }

        public func has(_ tag: String) -> Bool {
            if let bit = SeedPopulation.categories.firstIndex(of: tag) { return categories & (1 << bit) != 0 }
            if tag == SeedPopulation.warmupTag { return warmup }
            if tag == SeedPopulation.regionTag { return region }
            return tag == userTag
        }
    }

    public func profile(at index: Int) -> Profile {
        var random = generator(index)
        let platform: Platform = random.chance(55) ? .apns : .fcm
        let isLatencyTarget = index < latencyUsers
        let native = !isLatencyTarget && random.chance(5)
        let roll = random.below(4)
        let language = native ? nil : (roll < 2 ? 0 : roll - 1)
        var categories: UInt8 = 0
        let follows = 1 + random.below(3)
        while categories.nonzeroBitCount < follows { categories |= 1 << UInt8(random.below(6)) }
        var userTag: String?
        if isLatencyTarget {
            userTag = Self.latencyUserTag(index)
        } else if random.chance(20) {
            userTag = "$UserId:{u\(random.below(max(1, count / 3)))}"
        }
        // A generator of its own, so the region leaves every other draw as it was.
        var regional = SplitMix64(seed: seed ^ 0x5E61_0A11 &+ UInt64(index) &* 0xA24B_AED4_963E_E407)
        return Profile(
            categories: categories, platform: platform, language: language, userTag: userTag, warmup: index % 997 == 996,
            region: regional.below(1_000) < Self.regionPerMille)
    }

    /// The user tag of latency target `index` (< `latencyUsers`): exactly one registration has it.
    public static func latencyUserTag(_ index: Int) -> String { "$UserId:{bench-lat-\(index)}" }

    /// 32 hex digits like an issued id; the low half is the index, so ids never collide.
    public func registrationId(at index: Int) -> String {
        var random = SplitMix64(seed: seed ^ 0x1D5E_ED00 ^ UInt64(index))
        return Self.hex(random.next()) + Self.hex(UInt64(index))
    }

    public func registration(at index: Int) -> Registration {
        let profile = profile(at: index)
        var random = SplitMix64(seed: seed ^ 0x4A4D_D1E5 &+ UInt64(index) &* 0x9E37_79B9)
        let handle: String
        switch profile.platform {
        case .apns:
            handle = Self.hex(random.next()) + Self.hex(random.next()) + Self.hex(random.next()) + Self.hex(random.next())
        default:
            handle = Self.fcmToken(&random)
        }
        let edition = templateVariants.map { index % $0 }
        let template = profile.language.map { Self.template(platform: profile.platform, language: Self.languages[$0], edition: edition) }
        return Registration(
            registrationId: registrationId(at: index), platform: profile.platform, handle: handle,
            tags: profile.tags, template: template, expiresAt: nil, version: 1, hub: hub
        )
    }

    /// The seed tutorial's template for `language` on `platform`; with an `edition`, one more
    /// constant member that makes it a distinct template.
    public static func template(platform: Platform, language: String, edition: Int? = nil) -> RegistrationTemplate {
        let property = "$(News_\(language))"
        let extra = edition.map { #","edition":"\#($0)""# } ?? ""
        switch platform {
        case .apns:
            return RegistrationTemplate(
                name: templateName, body: #"{"aps":{"alert":"\#(property)"},"inAppMessage":"\#(property)"\#(extra)}"#,
                headers: ["apns-push-type": "alert"]
            )
        default:
            return RegistrationTemplate(
                name: templateName,
                body: #"{"message":{"notification":{"body":"\#(property)"},"data":{"inAppMessage":"\#(property)"\#(extra)}}}"#
            )
        }
    }

    /// The distinct templates the population's registrations carry (one pass over it).
    public func distinctTemplates() -> Int {
        var seen: Set<Int> = []
        for index in 0..<count {
            let profile = profile(at: index)
            guard let language = profile.language else { continue }
            let edition = templateVariants.map { index % $0 } ?? 0
            seen.insert((edition * Self.languages.count + language) * 2 + (profile.platform == .apns ? 0 : 1))
        }
        return seen.count
    }

    // MARK: Expected audiences (brute force)

    /// How many deliveries each event must produce on this population: every registration
    /// whose tags satisfy the audience (the domain's own evaluator, one registration at a
    /// time) and that has something to receive (a template, or a native payload for its
    /// platform). One pass over the population for all events.
    public func expectedDeliveries(for events: [NotificationEvent]) -> [Int] {
        var totals = Array(repeating: 0, count: events.count)
        for index in 0..<count {
            let profile = profile(at: index)
            for (position, event) in events.enumerated() {
                if let expression = event.audience.expression, !expression.evaluate(contains: profile.has) { continue }
                if profile.language != nil {
                    if event.includesTemplate(named: Self.templateName) { totals[position] += 1 }
                } else if event.native[profile.platform] != nil {
                    totals[position] += 1
                }
            }
        }
        return totals
    }

    // MARK: Helpers

    private func generator(_ index: Int) -> SplitMix64 {
        SplitMix64(seed: seed &+ UInt64(index) &* 0xD1B5_4A32_D192_ED03)
    }

    static func hex(_ value: UInt64) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: 16 - text.count) + text
    }

    private static let tokenAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// `<22 characters>:APA91b<134 characters>`: the shape of an FCM registration token.
    static func fcmToken(_ random: inout SplitMix64) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(163)
        for _ in 0..<22 { bytes.append(tokenAlphabet[random.below(64)]) }
        bytes.append(contentsOf: Array(":APA91b".utf8))
        for _ in 0..<134 { bytes.append(tokenAlphabet[random.below(64)]) }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// A small, fast, seedable generator: the same (seed, index) always yields the same
/// registration, so a population can be regenerated instead of kept in memory.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A value in 0..<bound without the bias `%` would have for large bounds.
    mutating func below(_ bound: Int) -> Int {
        Int(truncatingIfNeeded: next().multipliedFullWidth(by: UInt64(bound)).high)
    }

    /// True with probability `percent`/100.
    mutating func chance(_ percent: Int) -> Bool { below(100) < percent }
}

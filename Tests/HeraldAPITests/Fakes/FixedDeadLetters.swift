import HeraldAPI
import HeraldDomain

/// Dead letters from a fixed list of envelopes, as the dead-letter topic would hold them.
struct FixedDeadLetters: DeadLetterStore {
    /// (partition, offset, envelope JSON).
    var records: [(partition: Int32, offset: Int64, envelope: String)] = []
    var eventsTopic = "herald.events"

    var entries: [DeadLetterEntry] {
        records.compactMap { DeadLetterEntry(envelope: Array($0.envelope.utf8), partition: $0.partition, offset: $0.offset) }
    }

    func deadLetters(hub: HubName, limit: Int) async throws -> [DeadLetterEntry] {
        Array(entries.filter { $0.hub == hub }.reversed().prefix(limit))
    }

    func deadLetter(partition: Int32, offset: Int64, hub: HubName) async throws -> DeadLetterEntry? {
        entries.first { $0.partition == partition && $0.offset == offset && $0.hub == hub }
    }
}

import HeraldDomain
import HeraldRegistry

/// The de-duplication claim of an event id, `herald:event:<id>`: which record planned it and
/// a fingerprint of its content, `<partition>:<offset>:<fingerprint>`.
///
/// The first record with an id claims it. A later record with the same id and the same
/// content is a retry (skipped); with other content it is a conflict, which the planner
/// dead-letters (`duplicate_id_conflict`) and the API answers with 409.
public struct EventClaim: Sendable, Hashable {
    public var partition: Int32
    public var offset: Int64
    public var fingerprint: String

    public init(partition: Int32, offset: Int64, fingerprint: String) {
        self.partition = partition
        self.offset = offset
        self.fingerprint = fingerprint
    }

    /// The first 128 bits of the SHA-256 of the event's content, in hex: the content key
    /// the registry gives template bodies, applied to the event's content.
    public static func fingerprint(of event: NotificationEvent) -> String {
        TemplateContentKey.of(event.contentJSON())
    }

    /// Reads a stored claim. Claims written before fingerprints existed (`<partition>:<offset>`)
    /// read with an empty fingerprint, which matches nothing and conflicts with nothing.
    public init?(_ text: String) {
        let parts = text.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count >= 2, let partition = Int32(parts[0]), let offset = Int64(parts[1]) else { return nil }
        self.init(partition: partition, offset: offset, fingerprint: parts.count == 3 ? String(parts[2]) : "")
    }

    public var description: String { "\(partition):\(offset):\(fingerprint)" }

    /// Whether `other` was claimed by the same record.
    func isSameRecord(as other: EventClaim) -> Bool {
        partition == other.partition && offset == other.offset
    }

    /// Whether a record with `fingerprint` is a conflicting reuse of this claim's id.
    public func conflicts(with fingerprint: String) -> Bool {
        !self.fingerprint.isEmpty && self.fingerprint != fingerprint
    }
}

import CRdKafka

/// The librdkafka library actually loaded at run time (which may differ from the header
/// Herald was compiled against: Debian ships a 2.0.2 header, the runtime is 2.2 or newer).
public enum KafkaRuntime {
    /// For example "2.16.0".
    public static var versionString: String { String(cString: rd_kafka_version_str()) }

    /// The numeric version, decoded from `rd_kafka_version()` (0xMMmmrrpp).
    public static var version: KafkaRuntimeVersion {
        let packed = UInt32(bitPattern: rd_kafka_version())
        return KafkaRuntimeVersion(
            major: Int((packed >> 24) & 0xff),
            minor: Int((packed >> 16) & 0xff),
            patch: Int((packed >> 8) & 0xff)
        )
    }

    /// The oldest runtime Herald supports: 2.0.x mis-parses tagged fields in ApiVersions v3
    /// responses (fixed in 2.2.0), which breaks it against Tansu and newer brokers.
    public static let minimumSupportedVersion = KafkaRuntimeVersion(major: 2, minor: 2, patch: 0)
}

public struct KafkaRuntimeVersion: Comparable, Hashable, Sendable, CustomStringConvertible {
    public var major: Int
    public var minor: Int
    public var patch: Int

    public init(major: Int, minor: Int, patch: Int) {
        self.major = major
        self.minor = minor
        self.patch = patch
    }

    public static func < (lhs: Self, rhs: Self) -> Bool {
        (lhs.major, lhs.minor, lhs.patch) < (rhs.major, rhs.minor, rhs.patch)
    }

    public var description: String { "\(major).\(minor).\(patch)" }
}

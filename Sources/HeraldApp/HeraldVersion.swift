import HeraldKafka
import HeraldRedis

/// Herald's own version and the C libraries it actually loaded at run time.
public enum HeraldVersion {
    public static let herald = "0.1.0"

    public static var report: [(String, String)] {
        [
            ("herald", herald),
            ("librdkafka", KafkaRuntime.versionString),
            ("hiredis", RedisRuntime.hiredisVersion),
            ("hiredis library", RedisRuntime.loadedLibraryPath ?? "(not mapped)"),
        ]
    }

    /// librdkafka older than 2.2 mis-reads ApiVersions v3 tagged fields (fixed upstream in 2.2.0).
    public static var librdkafkaIsSupported: Bool {
        KafkaRuntime.version >= KafkaRuntimeVersion(major: 2, minor: 2, patch: 0)
    }
}

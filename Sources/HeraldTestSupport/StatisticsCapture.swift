import Foundation
import Logging
import Synchronization

/// A log handler that keeps the librdkafka statistics documents a client logs (the
/// `librdkafka.statistics` field, logged when `statistics.interval.ms` is set).
public final class StatisticsCapture: LogHandler, @unchecked Sendable {
    private let documents = Mutex<[String]>([])
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .info

    public init() {}

    /// A logger whose statistics documents land here.
    public func logger(label: String = "herald.test.statistics") -> Logger {
        Logger(label: label) { _ in self }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        guard case .string(let document)? = event.metadata?["librdkafka.statistics"] else { return }
        documents.withLock { $0.append(document) }
    }

    /// The documents captured so far, oldest first.
    public var captured: [String] { documents.withLock { $0 } }

    /// The newest document, parsed.
    public func latest() -> [String: Any]? {
        guard let last = captured.last else { return nil }
        return try? JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any]
    }

    /// Wake-ups of the broker threads that talk to real brokers (not the bootstrap or
    /// coordinator placeholders), summed, from a statistics document.
    public static func brokerWakeups(_ document: [String: Any]) -> Int {
        guard let brokers = document["brokers"] as? [String: Any] else { return 0 }
        return brokers.values.reduce(0) { sum, value in
            guard let broker = value as? [String: Any], let node = broker["nodeid"] as? Int, node >= 0 else { return sum }
            return sum + ((broker["wakeups"] as? Int) ?? 0)
        }
    }
}

import Foundation
import Logging
import Synchronization

/// Appends log lines to a file in the format of swift-log's `StreamLogHandler`, which writes only
/// to stdout or stderr. `herald-local demo` keeps its log here so the console shows the story alone.
public struct FileLogHandler: LogHandler {
    /// One open file shared by every logger of the process; writes are serialized.
    public final class Sink: Sendable {
        private let handle: Mutex<FileHandle>
        public let path: String

        /// Creates (or truncates) the file at `path`, and its folder.
        public init(path: String) throws {
            let url = URL(fileURLWithPath: path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            guard FileManager.default.createFile(atPath: path, contents: nil) else {
                throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path])
            }
            handle = Mutex(try FileHandle(forWritingTo: url))
            self.path = path
        }

        func write(_ line: String) {
            let data = Data(line.utf8)
            handle.withLock { try? $0.write(contentsOf: data) }
        }
    }

    public var logLevel: Logger.Level
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    private let label: String
    private let sink: Sink

    public init(label: String, sink: Sink, level: Logger.Level) {
        self.label = label
        self.sink = sink
        self.logLevel = level
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { $1 } }
        if let extra = event.metadata { merged.merge(extra) { $1 } }
        let fields = merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        let time = Date().ISO8601Format()
        sink.write("\(time) \(event.level) \(label):\(fields.isEmpty ? "" : " " + fields) \(event.message)\n")
    }
}

import Foundation
import HeraldKafka

/// The machine and the servers a run was measured on, stored with every result so figures
/// from different runs are only compared with their context.
public struct MachineDescription: Sendable, Codable, Hashable {
    public var processors: Int
    public var memoryBytes: Int
    public var cpuModel: String
    public var kernel: String
    /// The load average (1 minute) when the run started: a shared machine is noisy.
    public var loadAverageAtStart: Double
    public var librdkafka: String
    public var broker: String
    public var brokerBootstrap: String
    public var redis: String

    static func current(bootstrapServers: String, redisVersion: String) -> MachineDescription {
        let meminfo = (try? String(contentsOfFile: "/proc/meminfo", encoding: .utf8)) ?? ""
        let memoryKB =
            meminfo.split(separator: "\n").first { $0.hasPrefix("MemTotal:") }
            .flatMap { Int($0.filter(\.isNumber)) } ?? 0
        let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let model =
            cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }
            .map { $0.split(separator: ":", maxSplits: 1).last.map { $0.trimmingCharacters(in: .whitespaces) } ?? "" } ?? "unknown"
        let kernel = ((try? String(contentsOfFile: "/proc/sys/kernel/osrelease", encoding: .utf8)) ?? "unknown")
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let load =
            ((try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? "")
            .split(separator: " ").first.flatMap { Double($0) } ?? 0
        return MachineDescription(
            processors: ProcessInfo.processInfo.activeProcessorCount, memoryBytes: memoryKB * 1_024, cpuModel: model,
            kernel: kernel, loadAverageAtStart: load, librdkafka: KafkaRuntime.versionString,
            broker: brokerDescription(bootstrapServers), brokerBootstrap: bootstrapServers, redis: redisVersion
        )
    }

    /// What serves the bootstrap address when it is a local process: the embedded Tansu
    /// broker is recognised by its command line (and asked for its version), anything else
    /// is reported as a Kafka-protocol broker.
    static func brokerDescription(_ bootstrapServers: String) -> String {
        guard let first = bootstrapServers.split(separator: ",").first, let port = first.split(separator: ":").last,
            let process = ProcessProbe.find(commandLineContaining: ["broker", ":\(port)"])
        else { return "Kafka protocol broker (remote or unidentified)" }
        let executable = String(process.commandLine.split(separator: " ").first ?? "")
        guard executable.hasSuffix("tansu") else { return "Kafka protocol broker: \(executable)" }
        let version = Process.output(executable, ["--version"]) ?? "tansu (version unknown)"
        return "\(version.trimmingCharacters(in: .whitespacesAndNewlines)) (embedded, memory storage)"
    }

    /// The local broker process serving `bootstrapServers`, for CPU accounting.
    static func brokerPID(_ bootstrapServers: String) -> Int32? {
        guard let first = bootstrapServers.split(separator: ",").first, let port = first.split(separator: ":").last else { return nil }
        return ProcessProbe.find(commandLineContaining: ["broker", ":\(port)"])?.pid
    }
}

extension Process {
    /// Standard output of a short command, or nil when it cannot be run.
    static func output(_ executable: String, _ arguments: [String]) -> String? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return nil }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }
}

import ArgumentParser
import HeraldCommandLine
import HeraldApp
import HeraldKafka

struct TopicsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "topics",
        abstract: "Create or describe Herald's Kafka topics.",
        subcommands: [Create.self, Describe.self]
    )

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create missing topics with the recommended partitions and configs (idempotent)."
        )
        @OptionGroup var options: SettingsOptions

        func run() async throws {
            let settings = options.settings()
            let admin = try KafkaAdmin(configuration: settings.adminConfiguration())
            for (spec, partitions) in try await TopicPlan(settings: settings).create(admin: admin) {
                let configs = spec.configs.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
                let note = partitions == spec.partitions ? "" : "  (exists with \(partitions) partitions)"
                print("\(spec.name)  partitions=\(spec.partitions) replication=\(spec.replicationFactor) \(configs)\(note)")
            }
        }
    }

    struct Describe: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Partitions and configs of every Herald topic.")
        @OptionGroup var options: SettingsOptions

        func run() async throws {
            let settings = options.settings()
            let admin = try KafkaAdmin(configuration: settings.adminConfiguration())
            let existing = try await admin.listTopics()
            for spec in try TopicPlan(settings: settings).specifications() {
                guard existing[spec.name] != nil else {
                    print("\(spec.name)  missing (herald topics create)")
                    continue
                }
                let description = try await admin.describeTopic(spec.name)
                let configs = try await admin.describeConfigs(topic: spec.name)
                let interesting = ["cleanup.policy", "retention.ms", "delete.retention.ms", "min.insync.replicas"]
                    .compactMap { key in configs[key].map { "\(key)=\($0)" } }.joined(separator: " ")
                let replicas = description.partitions.first?.replicas.count ?? 0
                print("\(spec.name)  partitions=\(description.partitionCount) replicas=\(replicas) \(interesting)")
            }
        }
    }
}

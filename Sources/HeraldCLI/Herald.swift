import ArgumentParser
import HeraldApp
import HeraldCommandLine

@main
struct Herald: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "herald",
        abstract: "Kafka-driven fan-out engine for breaking-news push notifications.",
        discussion: "Every flag falls back to a HERALD_* environment variable; see `herald config`.",
        version: HeraldVersion.herald,
        subcommands: [
            WorkerCommand.self,
            APICommand.self,
            PublishCommand.self,
            CancelCommand.self,
            CorrectCommand.self,
            TailCommand.self,
            StatsCommand.self,
            ReindexCommand.self,
            TopicsCommand.self,
            HubsCommand.self,
            DLQCommand.self,
            RegistrationsCommand.self,
            TokenCommand.self,
            BenchCommand.self,
            ExprCommand.self,
            RenderCommand.self,
            ConfigCommand.self,
            VersionCommand.self,
        ]
    )

    /// Setting flags (`--kafka-brokers …`) are taken out first; `herald bench` passes every
    /// argument on to herald-bench untouched.
    static func main() async {
        await mainTakingSettingFlags(passThrough: BenchCommand.configuration.commandName)
    }
}

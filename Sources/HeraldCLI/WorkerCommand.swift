import ArgumentParser
import HeraldCommandLine
import HeraldApp

struct WorkerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "worker",
        abstract: "Run worker roles (planner, fanout, indexer); scale by running more workers.",
        discussion: "herald worker --roles planner,fanout,indexer --metrics-port 9090  (every setting: herald config)"
    )

    @OptionGroup var options: SettingsOptions

    func run() async throws {
        let settings = options.settings()
        try settings.checkSecrets(for: .worker)
        let registry = Observability.bootstrap(level: settings.logLevel)
        try await WorkerRunner(settings: settings, registry: registry).run()
    }
}

import ArgumentParser
import HeraldApp

struct WorkerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "worker",
        abstract: "Run worker roles (planner, fanout, indexer); scale by running more workers."
    )

    @OptionGroup var options: SettingsOptions
    @Option(help: "Roles to run, comma separated (HERALD_ROLES; default planner,fanout,indexer).") var roles: String?
    @Option(help: "Port for /metrics and /health (HERALD_METRICS_PORT; 0 disables).") var metricsPort: String?
    @Option(help: "Tasks a broadcast is split into (HERALD_TASKS_PER_BROADCAST).") var tasksPerBroadcast: String?

    func run() async throws {
        let settings = options.settings(extra: [
            .roles: roles, .metricsPort: metricsPort, .tasksPerBroadcast: tasksPerBroadcast,
        ])
        let registry = Observability.bootstrap(level: settings.logLevel)
        try await WorkerRunner(settings: settings, registry: registry).run()
    }
}

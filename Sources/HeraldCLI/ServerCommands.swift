import ArgumentParser
import HeraldApp
import HeraldCommandLine

struct WorkerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "worker",
        abstract: "Run worker roles (planner, fanout, indexer, scheduler, sender); scale by running more workers.",
        usage: "herald worker [--roles ROLES] [--metrics-port PORT] [--<setting> VALUE ...]",
        discussion: """
            herald worker --roles planner,fanout,indexer,scheduler --metrics-port 9090

            \(SettingsOptions.help([.roles, .metricsPort, .instanceId, .kafkaBrokers, .redisUrl, .logLevel]))

            Every setting is a flag and a HERALD_* variable: herald config lists them all.
            """
    )

    @OptionGroup var options: SettingsOptions

    func run() async throws {
        let settings = options.settings(readsStackEndpoints: false)
        try settings.checkSecrets(for: .worker)
        let registry = Observability.bootstrap(level: settings.logLevel)
        try await WorkerRunner(settings: settings, registry: registry).run()
        ProcessEnd.afterShutdown()
    }
}

struct APICommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "api",
        abstract: "Serve the HTTP API (registrations, installations, notifications, health, metrics).",
        usage: "herald api [--api-port PORT] [--policies POLICIES] [--<setting> VALUE ...]",
        discussion: """
            herald api --api-port 8080 --policies 'Full:listen+send+manage:<key>'

            \(SettingsOptions.help([.apiHost, .apiPort, .policies, .hubUri, .kafkaBrokers, .redisUrl, .logLevel]))

            Every setting is a flag and a HERALD_* variable: herald config lists them all.
            """
    )

    @OptionGroup var options: SettingsOptions

    func run() async throws {
        let settings = options.settings(readsStackEndpoints: false)
        try settings.checkSecrets(for: .api)
        let registry = Observability.bootstrap(level: settings.logLevel)
        try await APIRunner(settings: settings, registry: registry).run()
        ProcessEnd.afterShutdown()
    }
}

import ArgumentParser
import HeraldApp

struct APICommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "api",
        abstract: "Serve the HTTP API (registrations, installations, notifications, health, metrics)."
    )

    @OptionGroup var options: SettingsOptions
    @Option(help: "Bind address (HERALD_API_HOST).") var host: String?
    @Option(help: "Port (HERALD_API_PORT).") var port: String?
    @Option(help: "Resource URI for shared-access signatures (HERALD_HUB_URI).") var hubUri: String?

    func run() async throws {
        let settings = options.settings(extra: [.apiHost: host, .apiPort: port, .hubUri: hubUri])
        let registry = Observability.bootstrap(level: settings.logLevel)
        try await APIRunner(settings: settings, registry: registry).run()
    }
}

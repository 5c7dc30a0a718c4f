import ArgumentParser
import HeraldCommandLine
import HeraldApp

struct APICommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "api",
        abstract: "Serve the HTTP API (registrations, installations, notifications, health, metrics).",
        discussion: "herald api --api-port 8080 --policies 'Full:listen+send+manage:<key>'  (every setting: herald config)"
    )

    @OptionGroup var options: SettingsOptions

    func run() async throws {
        let settings = options.settings()
        try settings.checkSecrets(for: .api)
        let registry = Observability.bootstrap(level: settings.logLevel)
        try await APIRunner(settings: settings, registry: registry).run()
    }
}

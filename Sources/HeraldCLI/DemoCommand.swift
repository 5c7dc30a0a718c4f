import ArgumentParser
import HeraldCommandLine
import HeraldApp

struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Run the API, every worker role and the breaking-news story in one process (make run)."
    )

    @OptionGroup var options: SettingsOptions
    @Flag(help: "Keep running after the story until Ctrl-C.") var keepRunning = false

    func run() async throws {
        let settings = options.settings()
        let registry = Observability.bootstrap(level: settings.logLevel)
        try await DemoRunner(settings: settings, registry: registry, keepRunning: keepRunning).run()
    }
}

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
        let settings = options.settings()
        try settings.checkSecrets(for: .worker)
        let registry = Observability.bootstrap(level: settings.logLevel)
        try await WorkerRunner(settings: settings, registry: registry).run()
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
        let settings = options.settings()
        try settings.checkSecrets(for: .api)
        let registry = Observability.bootstrap(level: settings.logLevel)
        try await APIRunner(settings: settings, registry: registry).run()
    }
}

struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Run the API, every worker role and the breaking-news story in one process (make run)."
    )

    @OptionGroup var options: SettingsOptions
    @Flag(help: "Keep running after the story until Ctrl-C.") var keepRunning = false
    @Option(help: "Where the log goes, at --log-level; the console shows the story and errors only.")
    var logFile = ".herald/run/demo.log"

    func run() async throws {
        let settings = options.settings()
        let sink: FileLogHandler.Sink
        do {
            sink = try FileLogHandler.Sink(path: logFile)
        } catch {
            throw ValidationError("--log-file \(logFile): cannot be written (\(error.localizedDescription))")
        }
        let registry = Observability.bootstrap(level: settings.logLevel, logFile: sink, consoleLevel: .error)
        try await DemoRunner(settings: settings, registry: registry, keepRunning: keepRunning, logFile: sink.path).run()
    }
}

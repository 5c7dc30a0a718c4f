import ArgumentParser
import Foundation
import HeraldApp
import HeraldCommandLine
import HeraldLocalPush
import UnixSignals

/// `herald-local`: what a developer runs on one machine, and what the production `herald`
/// executable (the container image) does not carry: the demo story on the embedded stack, and
/// the local APNs and FCM servers on their own.
@main
struct HeraldLocal: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "herald-local",
        abstract: "Herald on one machine: the demo story (make run) and local push servers to try the sender against.",
        discussion: "Every flag falls back to a HERALD_* environment variable; see `herald config`.",
        version: HeraldVersion.herald,
        subcommands: [DemoCommand.self, PushSandboxCommand.self]
    )

    static func main() async { await mainTakingSettingFlags() }
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

/// Starts the local APNs and FCM servers alone and prints the sender's settings for them, so
/// a developer can point `herald worker --roles sender` (or anything speaking the two
/// protocols) at them.
struct PushSandboxCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push-sandbox",
        abstract:
            "Run local APNs, FCM, Web Push and WNS servers and print the HERALD_* settings that send to them; Ctrl-C stops them.",
        discussion:
            "The servers live in this process: copy the printed export lines into another shell, then run herald worker --roles sender."
    )

    @Option(help: "The APNs topic (bundle id) the local APNs server accepts.") var topic = "com.example.herald.news"
    @Option(help: "The FCM project id of the local service account.") var projectId = "herald-sandbox"

    func run() async throws {
        // Trapped before anything is printed: whoever stops the sandbox as soon as it has read the
        // settings (a script, a test) must find SIGTERM handled, not the default action.
        let signals = await UnixSignalsSequence(trapping: .sigint, .sigterm)
        let push = try await LocalPushServices.start(topic: topic, projectId: projectId)
        var lines = [
            "local APNs at \(push.apns.baseURL), local FCM at \(push.fcm.baseURL), local Web Push at \(push.webPush.origin), local WNS at \(push.wns.baseURL); send with:"
        ]
        lines += push.environment.sorted { $0.key < $1.key }.map { "export \($0.key)=\($0.value)" }
        lines.append(
            "a browser subscribed on the local Web Push service (register it with platform webpush): \(push.webPush.subscribe().handle)")
        lines.append("a channel URI on the local WNS server (platform wns): \(push.wns.openChannel())")
        lines.append("(Ctrl-C stops the servers)")
        // Unbuffered, so whoever reads a pipe sees the settings while the servers run.
        FileHandle.standardOutput.write(Data((lines.joined(separator: "\n") + "\n").utf8))
        for await _ in signals { break }
        await push.shutdown()
    }
}

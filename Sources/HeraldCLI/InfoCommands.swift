import ArgumentParser
import HeraldApp
import HeraldCommandLine

struct ConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config",
        abstract: "Print every setting with its flag, environment variable, default and resolved value."
    )

    @OptionGroup var options: SettingsOptions
    @Flag(help: "Print the reference table as Markdown (docs/configuration.md).") var markdown = false

    func run() throws {
        let settings = options.settings()
        if markdown {
            print("| flag | environment | default | meaning |")
            print("|---|---|---|---|")
            for setting in Setting.all {
                let value = setting.defaultValue.isEmpty ? "(empty)" : "`\(setting.defaultValue)`"
                print("| `\(setting.flag)` | `\(setting.environment)` | \(value) | \(setting.help) |")
            }
            return
        }
        for setting in Setting.all {
            print("\(setting.environment)=\(Setting.shown(setting.key, settings[setting.key]))")
        }
    }
}

struct VersionCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "version",
        abstract: "Print Herald's version and the librdkafka and hiredis versions loaded at run time."
    )

    func run() throws {
        for (name, value) in HeraldVersion.report {
            print("\(name): \(value)")
        }
        if !HeraldVersion.librdkafkaIsSupported {
            throw CommandFailure(
                "librdkafka \(HeraldVersion.report[1].1) is older than 2.2 and cannot talk to current brokers; run scripts/bootstrap")
        }
    }
}

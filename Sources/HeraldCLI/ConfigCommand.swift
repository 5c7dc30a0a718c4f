import ArgumentParser
import HeraldCommandLine
import HeraldApp

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

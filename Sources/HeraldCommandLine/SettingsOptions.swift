import ArgumentParser
import HeraldApp

/// The settings of a command: the `--<setting> VALUE` flags of `Setting.all`, then `HERALD_*`
/// environment variables, then (for the commands meant for local use) the embedded stack's
/// endpoints file, then the defaults.
///
/// The setting flags are not declared to ArgumentParser one by one: `SettingFlags.split` takes
/// them out of the command line before parsing, from the one table in `Setting.Key`, so a new
/// setting needs no option here. `herald config` lists them all.
public struct SettingsOptions: ParsableArguments {
    public init() {}

    /// - Parameters:
    ///   - defaults: the command's own defaults for some settings.
    ///   - readsStackEndpoints: whether `.herald/run/endpoints.env` in the working directory is
    ///     read. Not by the servers (`herald worker`, `herald api`): a production process takes
    ///     its configuration from its flags and environment only.
    public func settings(defaults: [Setting.Key: String] = [:], readsStackEndpoints: Bool = true) -> HeraldSettings {
        HeraldSettings(
            flags: SettingFlags.given, endpointsFile: readsStackEndpoints ? HeraldSettings.defaultEndpointsFile : nil,
            defaults: defaults)
    }
}

extension SettingsOptions {
    /// `--help` text for the settings a command mostly needs: flag, environment variable,
    /// default and meaning, one paragraph each (every setting: `herald config`).
    public static func help(_ keys: [Setting.Key]) -> String {
        keys.map { key in
            let setting = Setting(key)
            let fallback = setting.defaultValue.isEmpty ? "" : ", default \(setting.defaultValue)"
            return "\(setting.flag) VALUE  (\(setting.environment)\(fallback))\n    \(setting.help)"
        }.joined(separator: "\n")
    }
}

extension AsyncParsableCommand {
    /// Runs the command with the setting flags taken out of the command line first, or, when
    /// the first argument is `passThrough`, with every argument left as it is.
    public static func mainTakingSettingFlags(passThrough: String? = nil) async {
        var arguments = Array(CommandLine.arguments.dropFirst())
        var flags: [Setting.Key: String] = [:]
        if passThrough == nil || arguments.first != passThrough {
            do { (flags, arguments) = try SettingFlags.split(arguments) } catch { exit(withError: error) }
        }
        await SettingFlags.$given.withValue(flags) { await main(arguments) }
    }
}

/// The setting flags of a command line.
public enum SettingFlags {
    /// The running command's setting flags: bound by `mainTakingSettingFlags` for the whole of
    /// the command's parsing and run (empty elsewhere, as in tests that parse a command).
    @TaskLocal public static var given: [Setting.Key: String] = [:]

    /// The setting flags in `arguments` (`--<setting> VALUE` and `--<setting>=VALUE`, up to a
    /// `--`) and the arguments that are not setting flags, left for ArgumentParser.
    public static func split(_ arguments: [String]) throws -> (flags: [Setting.Key: String], rest: [String]) {
        var flags: [Setting.Key: String] = [:]
        var rest: [String] = []
        var index = arguments.startIndex
        while index < arguments.endIndex {
            let argument = arguments[index]
            index += 1
            if argument == "--" {
                rest += arguments[(index - 1)...]
                break
            }
            guard argument.hasPrefix("--") else {
                rest.append(argument)
                continue
            }
            let flag = argument.dropFirst(2)
            let name = flag.prefix { $0 != "=" }
            guard let key = Setting.Key(rawValue: String(name)) else {
                rest.append(argument)
                continue
            }
            if name.endIndex < flag.endIndex {
                flags[key] = String(flag[flag.index(after: name.endIndex)...])
            } else if index < arguments.endIndex {
                flags[key] = arguments[index]
                index += 1
            } else {
                throw ValidationError("missing value for \(Setting(key).flag) (\(Setting(key).environment))")
            }
        }
        return (flags, rest)
    }
}

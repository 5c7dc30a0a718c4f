import Foundation
import HeraldRedis

/// Herald's resolved configuration: for each setting, the command-line flag wins, then the
/// `HERALD_*` environment variable, then `.herald/run/endpoints.env` written by the embedded
/// stack (so commands in another terminal find it), then the documented default.
public struct HeraldSettings: Sendable {
    private var values: [Setting.Key: String]

    /// - Parameter defaults: a command's own defaults, in place of the documented ones (the
    ///   benchmark's shorter session timeout); flags, environment and stack still win.
    public init(
        flags: [Setting.Key: String] = [:],
        environment: [String: String] = ProcessInfo.processInfo.environment,
        endpointsFile: URL? = HeraldSettings.defaultEndpointsFile,
        defaults: [Setting.Key: String] = [:]
    ) {
        let stack = endpointsFile.flatMap(HeraldSettings.readEnvironmentFile) ?? [:]
        var resolved: [Setting.Key: String] = [:]
        for setting in Setting.all {
            resolved[setting.key] =
                flags[setting.key]
                ?? environment[setting.environment]
                ?? stack[setting.environment]
                ?? defaults[setting.key]
                ?? setting.defaultValue
        }
        values = resolved
    }

    public subscript(key: Setting.Key) -> String { values[key] ?? "" }

    /// A copy with some values replaced (the demo sets its own access keys, for example).
    public func overriding(_ replacements: [Setting.Key: String]) -> HeraldSettings {
        var copy = self
        copy.values.merge(replacements) { $1 }
        return copy
    }

    /// A whole number that must lie in `range`; `expected` says what is allowed when it does
    /// not. Each numeric setting has a reader with its range (`HeraldSettings+Components.swift`).
    public func int(_ key: Setting.Key, in range: ClosedRange<Int>, expected: String) throws -> Int {
        guard let value = Int(self[key].trimmingCharacters(in: .whitespaces)), range.contains(value) else {
            throw SettingError(key: key, value: self[key], expected: expected)
        }
        return value
    }

    /// true/yes/1 or false/no/0, in any case.
    public func bool(_ key: Setting.Key) throws -> Bool {
        switch self[key].trimmingCharacters(in: .whitespaces).lowercased() {
        case "true", "yes", "1": return true
        case "false", "no", "0": return false
        default: throw SettingError(key: key, value: self[key], expected: "true or false")
        }
    }

    public func list(_ key: Setting.Key) -> [String] {
        self[key].split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    public var instanceId: String {
        let configured = self[.instanceId]
        if !configured.isEmpty { return configured }
        return "\(ProcessInfo.processInfo.hostName)-\(ProcessInfo.processInfo.processIdentifier)"
    }

    public func topic(_ name: String) -> String { self[.topicPrefix] + name }

    /// `.herald/run/endpoints.env` under the current directory, when it exists.
    public static var defaultEndpointsFile: URL? {
        let url = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
            .appendingPathComponent(".herald/run/endpoints.env")
        return FileManager.default.fileExists(atPath: url.path) ? url : nil
    }

    static func readEnvironmentFile(_ url: URL) -> [String: String]? {
        guard let text = try? String(contentsOf: url, encoding: .utf8) else { return nil }
        var result: [String: String] = [:]
        for line in text.split(separator: "\n") {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard !trimmed.hasPrefix("#"), let equals = trimmed.firstIndex(of: "=") else { continue }
            result[String(trimmed[..<equals])] = String(trimmed[trimmed.index(after: equals)...])
        }
        return result
    }
}

public struct SettingError: Error, CustomStringConvertible {
    public var key: Setting.Key
    public var value: String
    public var expected: String
    public var description: String {
        let setting = Setting(key)
        // Callers describe credentials without their values; a Redis URL may carry a password.
        let shown = key == .redisUrl ? RedisConfiguration.redacting(value) : value
        return "invalid value '\(shown)' for \(setting.flag) (\(setting.environment)): expected \(expected)"
    }
}

import Foundation
import HeraldCommandLine

/// The `--property NAME=VALUE` and `--native PLATFORM=JSON` options of `herald publish` and
/// `herald correct`, as the members of a JSON body.
enum TextArguments {
    /// Adds `properties` and `native` to `object` when any were given.
    static func add(properties: [String], natives: [String], to object: inout [String: Any]) throws {
        var values: [String: String] = [:]
        for property in properties {
            let parts = property.split(separator: "=", maxSplits: 1)
            values[String(parts[0])] = parts.count > 1 ? String(parts[1]) : ""
        }
        if !values.isEmpty { object["properties"] = values }
        var native: [String: Any] = [:]
        for entry in natives {
            let parts = entry.split(separator: "=", maxSplits: 1)
            let text = try InputArgument.resolve(parts.count > 1 ? String(parts[1]) : "")
            guard let payload = try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed]) else {
                throw CommandFailure("--native \(parts[0]): not valid JSON")
            }
            native[String(parts[0])] = payload
        }
        if !native.isEmpty { object["native"] = native }
    }
}

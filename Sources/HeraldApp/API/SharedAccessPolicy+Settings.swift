import HeraldAPI

extension SharedAccessPolicy {
    /// Parses `HERALD_POLICIES`: `name:rights:key` entries separated by `;`, rights from
    /// `listen`, `send`, `manage` joined with `+`. The key is everything after the second `:`.
    static func parseList(_ text: String) throws -> [SharedAccessPolicy] {
        var policies: [SharedAccessPolicy] = []
        for (index, entry) in text.split(separator: ";").enumerated() {
            let parts = entry.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count == 3, !parts[0].isEmpty, !parts[2].isEmpty else {
                throw SettingError(key: .policies, value: "entry \(index + 1)", expected: "name:rights:key")
            }
            var rights: Set<AccessRight> = []
            for name in parts[1].split(separator: "+") {
                guard let right = AccessRight(rawValue: name.lowercased()) else {
                    throw SettingError(key: .policies, value: "\(parts[0]): \(name)", expected: "rights from listen, send, manage")
                }
                rights.insert(right)
            }
            policies.append(SharedAccessPolicy(name: String(parts[0]), key: String(parts[2]), rights: rights))
        }
        return policies
    }
}

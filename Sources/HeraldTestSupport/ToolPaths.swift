import Foundation

/// Where the servers and scratch folders used by tests live.
public enum ToolPaths {
    /// The repository root, found from this file's location (tests run from any directory).
    public static let repositoryRoot: URL = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }  // Sources/HeraldTestSupport/ToolPaths.swift
        return url
    }()

    /// The Tansu broker installed by scripts/bootstrap, or HERALD_TANSU.
    public static var tansu: String {
        ProcessInfo.processInfo.environment["HERALD_TANSU"]
            ?? repositoryRoot.appendingPathComponent(".herald/bin/tansu").path
    }

    /// redis-server from PATH (or HERALD_REDIS_SERVER).
    public static var redisServer: String {
        if let path = ProcessInfo.processInfo.environment["HERALD_REDIS_SERVER"] { return path }
        for dir in ["/usr/bin", "/usr/local/bin", "/opt/homebrew/bin"] {
            let candidate = dir + "/redis-server"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return "redis-server"
    }

    /// A fresh scratch folder under .herald/test-runs for one server's data and log.
    public static func scratchDirectory(_ name: String) throws -> URL {
        let url = repositoryRoot.appendingPathComponent(".herald/test-runs/\(name)-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}

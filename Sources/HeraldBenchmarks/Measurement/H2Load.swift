import Foundation

/// h2load (Debian's nghttp2-client), the independent HTTP/2 load generator whose rate against a
/// local push server is that server's ceiling in the sender and reach rows.
enum H2Load {
    static var executable: String? {
        ["/usr/bin/h2load", "/usr/local/bin/h2load"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// How a row names the measurement.
    static func command(requests: Int, connections: Int, streams: Int) -> String {
        "h2load -n \(requests) -c \(connections) -m \(streams) -t 1"
    }

    /// POSTs `body` to `url` `requests` times with `headers` over `connections` connections of
    /// `streams` streams on one thread, and answers h2load's requests per second; throws unless
    /// the server counted (`answered`, read before and after) every one of them as answered.
    static func rate(
        _ h2load: String, url: String, headers: [String], body: URL, requests: Int, connections: Int, streams: Int,
        answered: () -> Int
    ) throws -> Double? {
        let before = answered()
        let arguments =
            ["-n", String(requests), "-c", String(connections), "-m", String(streams), "-t", "1"]
            + headers.flatMap { ["-H", $0] } + ["-d", body.path, url]
        guard let output = Process.output(h2load, arguments) else { return nil }
        guard let line = output.split(separator: "\n").first(where: { $0.hasPrefix("finished in") }),
            let rate = line.split(separator: ",").first(where: { $0.contains("req/s") })?.split(separator: " ").first.flatMap({
                Double($0)
            }),
            answered() - before >= requests
        else {
            throw BenchmarkError("h2load did not finish its \(requests) requests to \(url): \(output.suffix(600))", code: "h2load")
        }
        return rate
    }
}

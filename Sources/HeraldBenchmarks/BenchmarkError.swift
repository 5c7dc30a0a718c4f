/// A benchmark could not run or could not be trusted (a count mismatch, a worker that
/// exited, a timeout). The message says which phase and what was seen.
public struct BenchmarkError: Error, Sendable, CustomStringConvertible {
    public var code: String
    public var message: String

    public init(_ message: String, code: String = "bench_failed") {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}

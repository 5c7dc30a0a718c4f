import ArgumentParser
import Foundation
import HeraldCommandLine

/// `herald bench ARGS`: runs `herald-bench ARGS`, the benchmark harness built next to this
/// executable. The harness is its own executable so the production binary links none of it.
struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure Herald against the broker's own ceiling (runs herald-bench; see herald-bench --help).",
        shouldDisplay: true
    )

    @Argument(parsing: .allUnrecognized, help: "Arguments for herald-bench.") var arguments: [String] = []

    func run() throws {
        let own = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let harness = URL(fileURLWithPath: own).deletingLastPathComponent().appendingPathComponent("herald-bench").path
        guard FileManager.default.isExecutableFile(atPath: harness) else {
            throw CommandFailure(
                "herald-bench is not next to \(own); build it with HERALD_BENCH=1 swift build -c release --product herald-bench (make bench does)"
            )
        }
        let argv = [harness] + arguments
        let cArguments = argv.map { strdup($0) } + [nil]
        execv(harness, cArguments)
        throw CommandFailure("cannot run \(harness): \(String(cString: strerror(errno)))")
    }
}

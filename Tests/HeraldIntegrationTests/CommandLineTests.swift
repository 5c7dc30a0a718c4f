import Foundation
import Testing

@Suite("herald command line", .enabled(if: HeraldBinary.isBuilt, "build the herald executable first (swift build --build-tests)"))
struct CommandLineTests {
    @Test("herald version reports a librdkafka runtime >= 2.2 and the hiredis in use")
    func version() throws {
        let output = try HeraldBinary.run(["version"])
        #expect(output.status == 0, "\(output.stderr)")
        let line = try #require(output.stdout.split(separator: "\n").first { $0.hasPrefix("librdkafka: ") })
        let parts = line.dropFirst("librdkafka: ".count).split(separator: ".").compactMap { Int($0) }
        #expect(parts.count >= 2)
        #expect(parts.lexicographicallyPrecedes([2, 2]) == false, "loaded librdkafka \(line) is older than 2.2")
        #expect(output.stdout.contains("hiredis: "))
    }

    @Test("expr check prints the canonical form, or the error with a caret and a non-zero exit")
    func exprCheck() throws {
        let good = try HeraldBinary.run(["expr", "check", "( World||Politics )&&!Sports"])
        #expect(good.status == 0)
        #expect(good.stdout == "(World || Politics) && !Sports\n")

        let bad = try HeraldBinary.run(["expr", "check", "(World || "])
        #expect(bad.status != 0)
        #expect(bad.stderr.contains("column 11"))
        #expect(bad.stderr.contains("          ^"))
    }

    @Test("expr eval answers true or false for a tag set")
    func exprEval() throws {
        let expression = "(follows_RedSox || follows_Cardinals) && location_Boston"
        #expect(try HeraldBinary.run(["expr", "eval", expression, "--tags", "follows_RedSox,location_Boston"]).stdout == "true\n")
        #expect(try HeraldBinary.run(["expr", "eval", expression, "--tags", "follows_RedSox"]).stdout == "false\n")
    }

    @Test("render prints the rendered body, and a template error with its position")
    func render() throws {
        let output = try HeraldBinary.run([
            "render", "--template", #"{"aps":{"alert":"$(News_French)"},"inAppMessage":"$(News_French)"}"#,
            "--properties", #"{"News_French":"Fin du sommet"}"#,
        ])
        #expect(output.stdout == #"{"aps":{"alert":"Fin du sommet"},"inAppMessage":"Fin du sommet"}"# + "\n")
        let bad = try HeraldBinary.run(["render", "--template", #"{"aps":{"alert":"$(News"}}"#])
        #expect(bad.status != 0)
        #expect(bad.stderr.contains("column"))
    }

    @Test(
        "a bad setting value stops the worker before it connects, naming the flag, the variable and what is allowed",
        arguments: [
            ("--narrow-events", "sideways", "'sideways' for --narrow-events (HERALD_NARROW_EVENTS): expected planner or express-lane"),
            ("--task-fetch-wait-ms", "soon", "'soon' for --task-fetch-wait-ms (HERALD_TASK_FETCH_WAIT_MS): expected a whole number"),
            ("--task-fetch-wait-ms", "-5", "'-5' for --task-fetch-wait-ms (HERALD_TASK_FETCH_WAIT_MS): expected milliseconds from 0 to 300000"),
        ]
    )
    func badSettingValue(flag: String, value: String, message: String) throws {
        let output = try HeraldBinary.run([
            "worker", "\(flag)=\(value)", "--kafka-brokers", "127.0.0.1:1", "--redis-url", "redis://127.0.0.1:1",
        ])
        #expect(output.status != 0)
        #expect(output.stderr.contains(message), "\(output.stderr)")
    }
}

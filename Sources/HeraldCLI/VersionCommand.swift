import ArgumentParser
import HeraldCommandLine
import HeraldApp

struct VersionCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "version",
        abstract: "Print Herald's version and the librdkafka and hiredis versions loaded at run time."
    )

    func run() throws {
        for (name, value) in HeraldVersion.report {
            print("\(name): \(value)")
        }
        if !HeraldVersion.librdkafkaIsSupported {
            throw CommandFailure(
                "librdkafka \(HeraldVersion.report[1].1) is older than 2.2 and cannot talk to current brokers; run scripts/bootstrap")
        }
    }
}

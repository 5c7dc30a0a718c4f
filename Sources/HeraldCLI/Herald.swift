import ArgumentParser
import HeraldApp

@main
struct Herald: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "herald",
        abstract: "Kafka-driven fan-out engine for breaking-news push notifications."
    )
}

import ArgumentParser
import Foundation
import HeraldApp
import HeraldCommandLine
import HeraldDomain

struct CorrectCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "correct",
        abstract: "Correct an alert already sent: new text, or a withdrawal, on the devices it reached.",
        discussion: """
            Does what POST /v1/notifications/{id}/corrections does: the event is read back from the
            event log, the new properties (or native payloads) laid over its own, and the correction
            goes to exactly the devices the event reached, in each platform's replace header, so the
            new text takes the old one's place on the lock screen. --withdraw sends a silent push
            telling the app to remove the alert instead. Prints the correction's id.
              herald correct bn-2231 --property News_English='Summit ends without agreement' --reason 'wrong outcome'
              herald correct bn-2231 --withdraw --by duty-editor
            Exits 1 when the event is unknown or its fan-out has not completed.
            """
    )

    @OptionGroup var options: SettingsOptions
    @Argument(help: "The id of the event to correct.") var id: String
    @Option(help: "The event's hub (default: the default hub).") var hub: String?
    @Option(name: .customLong("property"), help: "NAME=VALUE replacing the event's property; repeatable.") var properties: [String] = []
    @Option(name: .customLong("native"), help: "PLATFORM=JSON replacing the event's native payload; repeatable.")
    var natives: [String] = []
    @Flag(help: "Remove the alert (a silent push) instead of replacing its text.") var withdraw = false
    @Option(help: "Who corrects (default: herald-cli).") var by: String = "herald-cli"
    @Option(help: "Why, in words.") var reason: String?

    func validate() throws {
        if let problem = IdentifierRules.eventIdProblem(id) { throw ValidationError("id: \(problem)") }
        if let hub, HubName(hub) == nil { throw ValidationError("--hub: \(HubName.problem(hub) ?? "not a hub name")") }
        for property in properties where !property.contains("=") {
            throw ValidationError("--property expects NAME=VALUE, got '\(property)'")
        }
        for native in natives where !native.contains("=") {
            throw ValidationError("--native expects PLATFORM=JSON, got '\(native)'")
        }
    }

    func run() async throws {
        var object: [String: Any] = [:]
        try TextArguments.add(properties: properties, natives: natives, to: &object)
        if withdraw { object["withdraw"] = true }
        object["by"] = by
        if let reason { object["reason"] = reason }
        let body = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        let request: CorrectionRequest
        do {
            request = try CorrectionRequest.decode(Array(body))
        } catch {
            throw CommandFailure("the correction is invalid: \(error)")
        }
        let corrector = try EventCorrector(settings: options.settings())
        let result: Result<String, any Error>
        do {
            result = .success(
                try await corrector.correct(eventId: id, hub: hub.flatMap(HubName.init) ?? .default, request: request, by: by))
        } catch {
            result = .failure(error)
        }
        await corrector.shutdown()
        do {
            let correctionId = try result.get()
            print("correction \(correctionId) of \(id) published; read its status with GET /v1/notifications/\(correctionId)")
        } catch let refused as EventCancellationRefused {
            throw CommandFailure(refused.message)
        }
    }
}

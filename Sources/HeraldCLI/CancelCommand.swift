import ArgumentParser
import Foundation
import HeraldApp
import HeraldCommandLine
import HeraldDomain

struct CancelCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cancel",
        abstract: "Cancel a scheduled event, or stop one being fanned out or sent.",
        discussion: """
            Does what DELETE /v1/notifications/{id} does: what is left of a schedule is cancelled; an
            event being fanned out stops (no task delivers more after its current page); the sender
            sends nothing more of it (its receipts say cancelled). Prints the event's status.
              herald cancel bn-2231
              herald cancel goal-7 --hub sports
            Exits 1 when there is nothing left to cancel (the event completed and was sent, expired or
            was rejected) or no status is known for the id.
            """
    )

    @OptionGroup var options: SettingsOptions
    @Argument(help: "The event id.") var id: String
    @Option(help: "The event's hub (default: the default hub).") var hub: String?
    @Option(help: "Seconds to wait for the workers to report the event cancelled.") var wait: Int = 5

    func validate() throws {
        if let problem = IdentifierRules.eventIdProblem(id) { throw ValidationError("id: \(problem)") }
        if let hub, HubName(hub) == nil { throw ValidationError("--hub: \(HubName.problem(hub) ?? "not a hub name")") }
        guard (0...600).contains(wait) else { throw ValidationError("--wait: expected 0 to 600 seconds, got \(wait)") }
    }

    func run() async throws {
        let hubName = hub.flatMap(HubName.init) ?? .default
        let canceller = try EventCanceller(settings: options.settings(), wait: .seconds(wait))
        let result: Result<(StatusRecord, CancellationOutcome), any Error>
        do {
            result = .success(try await canceller.cancel(eventId: id, hub: hubName))
        } catch {
            result = .failure(error)
        }
        await canceller.shutdown()
        let (record, outcome): (StatusRecord, CancellationOutcome)
        do {
            (record, outcome) = try result.get()
        } catch let refused as EventCancellationRefused {
            throw CommandFailure(refused.message)
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        print(String(decoding: try encoder.encode(record), as: UTF8.self))
        var standardError = StandardError()
        switch outcome {
        case .cancelled:
            print("\(id): cancelled", to: &standardError)
        case .pending:
            print("\(id): asked; the workers had not reported it cancelled within \(wait) s (read its status later)", to: &standardError)
        case .stoppingSends:
            print(
                "\(id): its fan-out had completed; the deliveries not sent yet get the receipt cancelled, and the devices held for their quiet hours get nothing",
                to: &standardError)
        }
    }
}

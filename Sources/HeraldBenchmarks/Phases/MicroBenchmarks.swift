import Crypto
import Foundation
import HeraldDomain
import HeraldPush
import HeraldRegistry

/// Nanoseconds per operation of the domain's hot-path pieces, measured with the monotonic
/// `ContinuousClock`: each benchmark is calibrated to about `targetRunTime` per run, run
/// `runs` times, and reported as the median run (the machine is shared and noisy).
struct MicroBenchmarks: Sendable {
    typealias Result = BenchmarkReport.Micro

    var runs: Int = 7
    var targetRunTime: Duration = .milliseconds(60)

    func run() throws -> [Result] {
        let expressionText = "(World || Politics) && !Sports"
        let expression = try TagExpression.parse(expressionText)
        let tags: Set<String> = ["World", "Science", "$UserId:{u123}"]
        let template = try CompiledTemplate.compile(
            #"{"aps":{"alert":"$(News_French)"},"inAppMessage":"$(News_French)"}"#, format: .json
        )
        let properties = TemplateProperties(BenchmarkEvents.properties)
        let population = SeedPopulation(count: 1_000, seed: 7)
        let registration = population.registration(at: 300)
        let now = Date()
        let record = DeliveryRecord(
            eventId: "bn-2026-11-21-0001", registrationId: registration.registrationId, platform: registration.platform,
            handle: registration.handle, template: registration.deliveryTemplateName,
            payload: template.render(properties),
            headers: DeliveryHeaders.forDelivery(
                platform: registration.platform, event: BenchmarkEvents.broadcast(id: "x"), templateHeaders: [:], bodyFormat: .json,
                now: now
            ),
            expiresAt: nil, publishedAt: now, renderedAt: now
        )
        var buffer: [UInt8] = []
        buffer.reserveCapacity(4_096)
        var sink = 0

        var results: [Result] = []
        results.append(
            measure("tag expression parse `\(expressionText)`") {
                sink &+= (try? TagExpression.parse(expressionText)) == nil ? 0 : 1
            })
        results.append(
            measure("tag expression evaluate (3 tags)") {
                sink &+= expression.evaluate(tags) ? 1 : 0
            })
        results.append(
            measure("template render into buffer (APNs, French)") {
                buffer.removeAll(keepingCapacity: true)
                template.render(properties, into: &buffer)
                sink &+= buffer.count
            })
        results.append(
            measure("DeliveryRecord.encode(into:)") {
                buffer.removeAll(keepingCapacity: true)
                record.encode(into: &buffer)
                sink &+= buffer.count
            })
        results.append(
            measure("Registration.jsonBytes (the registrations record)") {
                sink &+= registration.jsonBytes().count
            })
        results.append(
            measure("IndexedRegistration(registration) (index form: JSON round trip)") {
                sink &+= IndexedRegistration(registration).document.count
            })
        // Web Push: the whole encryption of one message, and its two P-256 operations.
        let browser = P256.KeyAgreement.PrivateKey()
        let subscription = WebPushSubscription(
            endpoint: "https://push.example.net/push/x", p256dh: Array(browser.publicKey.x963Representation),
            auth: Array(repeating: 7, count: 16))
        let message = Array(#"{"title":"Breaking news","body":"the summit ends with a climate agreement"}"#.utf8)
        results.append(
            measure("web push: encrypt one message (RFC 8291, fresh key and salt)") {
                sink &+= (try? WebPushEncryption.encrypt(message, for: subscription))?.count ?? 0
            })
        results.append(
            measure("web push: P-256 key pair generation") {
                sink &+= WebPushEncryption.messageKey().publicKey.x963Representation.count
            })
        let server = P256.KeyAgreement.PrivateKey()
        results.append(
            measure("web push: P-256 ECDH with the browser's key (parsed each time)") {
                let key = try? P256.KeyAgreement.PublicKey(x963Representation: subscription.p256dh)
                sink &+= key.flatMap { try? server.sharedSecretFromKeyAgreement(with: $0) } == nil ? 0 : 1
            })
        // Keeps the optimizer from dropping the measured work.
        if sink == 42 { print("") }
        return results
    }

    private func measure(_ name: String, _ body: () -> Void) -> Result {
        // Calibrate: double the iterations until one run takes a tenth of the target.
        var iterations = 64
        while true {
            let elapsed = time(iterations, body)
            if elapsed >= targetRunTime / 10 || iterations >= 1 << 26 {
                let scale = targetRunTime.seconds / max(elapsed.seconds, 1e-9)
                iterations = max(1, Int(Double(iterations) * scale))
                break
            }
            iterations *= 2
        }
        var samples: [Double] = []
        for _ in 0..<max(1, runs) {
            samples.append(time(iterations, body).seconds * 1e9 / Double(iterations))
        }
        return Result(name: name, nanosecondsPerOperation: samples.sorted()[samples.count / 2], iterationsPerRun: iterations, runs: samples)
    }

    private func time(_ iterations: Int, _ body: () -> Void) -> Duration {
        let clock = ContinuousClock()
        let start = clock.now
        for _ in 0..<iterations { body() }
        return clock.now - start
    }
}

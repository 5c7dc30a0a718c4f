import Foundation
import HTTPTypes
import HeraldDomain
import Hummingbird
import NIOCore

/// The XML documents of Azure Notification Hubs' protocol that Herald writes.
enum AzureXML {
    static let connectNamespace = "http://schemas.microsoft.com/netservices/2010/10/servicebus/connect"

    /// Text escaped for an XML element or attribute.
    static func escaped(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            default: out.append(character)
            }
        }
        return out
    }

    /// `text` as a CDATA section (`]]>` inside it split across two).
    static func cdata(_ text: String) -> String {
        "<![CDATA[" + text.replacingOccurrences(of: "]]>", with: "]]]]><![CDATA[>") + "]]>"
    }

    static func response(
        _ xml: String, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:], contentType: String = "application/xml; charset=utf-8"
    ) -> Response {
        var fields = headers
        fields[.contentType] = contentType
        return Response(status: status, headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(string: xml)))
    }

    /// Azure's error body: `<Error><Code>400</Code><Detail>…</Detail></Error>`; the detail says
    /// what and where (the field, when there is one).
    static func error(_ apiError: APIError) -> Response {
        var detail = apiError.message
        if let field = apiError.field, !field.isEmpty, !detail.contains(field) { detail = "\(field): \(detail)" }
        let xml = "<Error><Code>\(apiError.status.code)</Code><Detail>\(escaped(detail))</Detail></Error>"
        return response(xml, status: apiError.status, headers: apiError.headers)
    }

    /// One device of a test send and what became of its notification.
    struct TestResult {
        enum Outcome {
            /// The sender's receipt.
            case receipt(PushOutcome, reason: String?)
            /// The fan-out wrote nothing for it (its status counts it as skipped, with the reason).
            case notDelivered
            /// No receipt within the answer's wait (it may still come; the status will count it).
            case noAnswerYet
        }

        var registration: Registration
        var outcome: Outcome

        var succeeded: Bool {
            if case .receipt(.sent, _) = outcome { return true }
            return false
        }

        /// Azure's sentence for the outcome, with Herald's reason where there is one.
        var text: String {
            switch outcome {
            case .receipt(.sent, _): return "The Notification was successfully sent to the Push Notification System"
            case .receipt(let outcome, let reason):
                let said: String =
                    switch outcome {
                    case .unregistered: "The Push Notification System handle for the registration is invalid"
                    case .rejected: "The Push Notification System rejected the notification"
                    case .expired: "The notification expired before it was sent"
                    case .cancelled: "The notification was stopped before it was sent"
                    case .failed, .sent: "The notification could not be sent to the Push Notification System"
                    }
                return reason.map { "\(said): \($0)" } ?? said
            case .notDelivered: return "No notification for this registration (its status says why it was skipped)"
            case .noAnswerYet: return "The Push Notification System has not answered yet"
            }
        }

        /// Azure's platform names.
        var platform: String {
            switch registration.platform {
            case .apns: "apple"
            case .fcm: "fcmv1"
            case .wns: "windows"
            case .webpush: "browser"
            }
        }
    }

    /// `NotificationOutcome`, the answer to a test send: how many succeeded and failed, and each
    /// device's outcome.
    static func notificationOutcome(_ results: [TestResult]) -> String {
        let success = results.count { $0.succeeded }
        var xml = #"<NotificationOutcome xmlns="\#(connectNamespace)" xmlns:i="http://www.w3.org/2001/XMLSchema-instance">"#
        xml += "<Success>\(success)</Success><Failure>\(results.count - success)</Failure><Results>"
        for result in results {
            xml += "<RegistrationResult><ApplicationPlatform>\(result.platform)</ApplicationPlatform>"
            xml += "<PnsHandle>\(escaped(result.registration.handle))</PnsHandle>"
            xml += "<RegistrationId>\(escaped(result.registration.registrationId))</RegistrationId>"
            xml += "<Outcome>\(escaped(result.text))</Outcome></RegistrationResult>"
        }
        return xml + "</Results></NotificationOutcome>"
    }

    /// `NotificationDetails`, Azure's per-message telemetry, from Herald's status of the event.
    static func notificationDetails(_ status: StatusRecord, location: String) -> String {
        var xml = #"<NotificationDetails xmlns="\#(connectNamespace)" xmlns:i="http://www.w3.org/2001/XMLSchema-instance">"#
        xml += "<NotificationId>\(escaped(status.eventId))</NotificationId>"
        xml += "<Location>\(escaped(location))</Location>"
        xml += "<State>\(state(status))</State>"
        xml += "<EnqueueTime>\(ISO8601Timestamp.format(status.timings.acceptedAt))</EnqueueTime>"
        if let start = status.timings.firstDeliveryAt ?? (status.state == .accepted ? nil : status.timings.acceptedAt) {
            xml += "<StartTime>\(ISO8601Timestamp.format(start))</StartTime>"
        }
        if let end = status.timings.completedAt { xml += "<EndTime>\(ISO8601Timestamp.format(end))</EndTime>" }
        let platforms = status.targets.byPlatform.keys.sorted().compactMap(Platform.init).map(targetPlatform)
        if !platforms.isEmpty { xml += "<TargetPlatforms>\(platforms.joined(separator: ","))</TargetPlatforms>" }
        for (platform, element) in [(Platform.apns, "ApnsOutcomeCounts"), (.wns, "WnsOutcomeCounts"), (.fcm, "FcmV1OutcomeCounts")] {
            guard let counts = status.push?[platform.rawValue], !counts.isEmpty else { continue }
            xml += "<\(element)>"
            for (outcome, count) in counts.sorted(by: { $0.key < $1.key }) {
                xml += "<Outcome><Name>\(outcomeName(outcome))</Name><Count>\(count)</Count></Outcome>"
            }
            xml += "</\(element)>"
        }
        return xml + "</NotificationDetails>"
    }

    /// Azure's `State` for a Herald status.
    static func state(_ status: StatusRecord) -> String {
        switch status.state {
        case .accepted, .scheduled, .released: "Enqueued"
        case .processing: "Processing"
        case .completed: status.targets.total == 0 ? "NoTargetFound" : "Completed"
        case .expired, .rejected: "Abandoned"
        case .cancelled: "Cancelled"
        }
    }

    static func targetPlatform(_ platform: Platform) -> String {
        switch platform {
        case .apns: "apple"
        case .fcm: "fcmv1"
        case .wns: "windows"
        case .webpush: "browser"
        }
    }

    /// Azure's outcome names for Herald's receipt outcomes.
    static func outcomeName(_ outcome: String) -> String {
        switch PushOutcome(rawValue: outcome) {
        case .sent: "Success"
        case .unregistered: "ExpiredChannel"
        case .rejected: "InvalidNotificationFormat"
        case .expired, .cancelled: "Dropped"
        case .failed: "PnsInterfaceError"
        case nil: "Unknown"
        }
    }
}

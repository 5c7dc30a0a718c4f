import Foundation
import HeraldDomain

/// One rendered payload on one platform within a task: the record frame every device receiving
/// it is written through (`DeliveryRecord.Frame`, built once), with the platform and template
/// name the task's counts are kept by.
final class DeliveryRendition: Sendable {
    let platform: Platform
    let templateName: String
    private let frame: DeliveryRecord.Frame

    init(
        eventId: String, platform: Platform, templateName: String, payload: [UInt8], headers: DeliveryHeaders,
        expiresAt: Date?, publishedAt: Date?
    ) {
        self.platform = platform
        self.templateName = templateName
        frame = DeliveryRecord.Frame(
            eventId: eventId, platform: platform, templateName: templateName, payload: payload, headers: headers,
            expiresAt: expiresAt, publishedAt: publishedAt)
    }

    /// Appends one record. `renderedAt` is the already formatted timestamp (the caller formats
    /// it once per page of recipients).
    @inline(__always)
    func write(registrationId: some Collection<UInt8>, handle: some Collection<UInt8>, renderedAt: [UInt8], into bytes: inout [UInt8]) {
        frame.write(registrationId: registrationId, handle: handle, renderedAt: renderedAt, into: &bytes)
    }
}

import Crypto
import Foundation

/// The `apns-id` of a delivery: a name-based UUID (version 5, SHA-1, RFC 9562) of its
/// `deliveryId` in Herald's own namespace, so every attempt of the same delivery, from any
/// sender, carries the same id and APNs's answers and Apple's delivery log can be matched
/// to the receipt.
public enum APNsRequestID {
    /// Herald's namespace for delivery ids (a random UUID chosen once; never change it).
    static let namespace: [UInt8] = [
        0x5d, 0x0f, 0x8c, 0x1e, 0x3a, 0x47, 0x4b, 0x52, 0x9e, 0x61, 0x0c, 0x2d, 0x7a, 0x94, 0xb3, 0x18,
    ]

    public static func forDelivery(_ deliveryId: String) -> UUID {
        var hash = Insecure.SHA1()
        hash.update(data: namespace)
        hash.update(data: Array(deliveryId.utf8))
        var bytes = Array(hash.finalize().prefix(16))
        bytes[6] = (bytes[6] & 0x0f) | 0x50  // version 5
        bytes[8] = (bytes[8] & 0x3f) | 0x80  // RFC 9562 variant
        return UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            ))
    }
}

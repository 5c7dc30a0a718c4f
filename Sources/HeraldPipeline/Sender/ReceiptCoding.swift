import Foundation
import HeraldDomain
import HeraldKafka

/// How receipts are written to `herald.receipts` (key: the delivery id) and to sent-markers.
enum ReceiptCoding {
    static func encode(_ receipt: PushReceipt) -> [UInt8] { receipt.encoded() }

    static func decode(_ bytes: [UInt8]) -> PushReceipt? {
        try? JSONDecoder().decode(PushReceipt.self, from: Data(bytes))
    }

    static func message(_ receipt: PushReceipt, encoded: [UInt8], topic: String) -> KafkaOutgoingMessage {
        KafkaOutgoingMessage(topic: topic, key: Array(receipt.deliveryId.utf8), value: encoded)
    }
}

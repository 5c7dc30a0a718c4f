import Foundation
@testable import HeraldBenchmarks
import Testing

@Suite("Delivery watcher bookkeeping")
struct DeliveryWatcherTests {
    @Test("the count seen at a moment is the running count of the last poll before it")
    func countAtMoment() {
        let start = Date(timeIntervalSince1970: 1_000)
        var stats = DeliveryWatcher.EventStats()
        stats.progress = [(start, 10), (start + 1, 250), (start + 2, 1_000)]
        #expect(stats.count(at: start - 1) == 0)
        #expect(stats.count(at: start) == 10)
        #expect(stats.count(at: start + 1.5) == 250)
        #expect(stats.count(at: start + 60) == 1_000)
    }

    @Test("the event id is read from the opening of a delivery record and nothing else")
    func eventIdOfRecord() {
        let record = Array(#"{"deliveryId":"bn-7/reg-1/newsTemplate","eventId":"bn-7"}"#.utf8)
        #expect(DeliveryWatcher.eventIdBytes(record).map { String(decoding: $0, as: UTF8.self) } == "bn-7")
        #expect(DeliveryWatcher.eventIdBytes(Array(#"{"eventId":"bn-7"}"#.utf8)) == nil)
        #expect(DeliveryWatcher.eventIdBytes(Array(#"{"deliveryId":"no-slash"}"#.utf8)) == nil)
    }
}

import HeraldKafka
import Testing

/// The clock a loop reads to tell "my group does not assign me partitions" from "idle".
@Suite("Group membership clock")
struct GroupMembershipClockTests {
    let origin = ContinuousClock.now
    let partition = KafkaTopicPartition(topic: "t", partition: 0)

    @Test("the wait runs from joining until an assignment, even an empty one")
    func joiningUntilAssigned() {
        let clock = GroupMembershipClock(origin: origin)
        #expect(clock.waiting(at: origin + .seconds(5)) == .zero, "a consumer that never joined waits for nothing")
        clock.joining(at: origin + .seconds(1))
        #expect(clock.waiting(at: origin + .seconds(4)) == .seconds(3))
        clock.rebalanced(.assigned([]), at: origin + .seconds(5))
        #expect(clock.waiting(at: origin + .seconds(60)) == .zero)
    }

    @Test("a revocation or loss starts a wait that the next assignment ends; a second one does not restart it")
    func revocationStartsWait() {
        let clock = GroupMembershipClock(origin: origin)
        clock.joining(at: origin)
        clock.rebalanced(.assigned([partition]), at: origin + .seconds(1))
        clock.rebalanced(.revoked([partition]), at: origin + .seconds(10))
        clock.rebalanced(.lost([partition]), at: origin + .seconds(20))
        #expect(clock.waiting(at: origin + .seconds(30)) == .seconds(20))
        clock.rebalanced(.assigned([partition]), at: origin + .seconds(31))
        #expect(clock.waiting(at: origin + .seconds(40)) == .zero)
        clock.rebalanced(.lost([partition]), at: origin + .seconds(41))
        clock.left()
        #expect(clock.waiting(at: origin + .seconds(50)) == .zero, "a closed member waits for nothing")
    }
}

/// `herald_consumer_lag` of an idle loop: commit markers after the last record are not work.
@Suite("Consumer lag")
struct ConsumerLagTests {
    let partition = KafkaTopicPartition(topic: "t", partition: 0)

    @Test("an idle owner that read to the end has no lag, though markers follow its last commit")
    func markersAreNotLag() {
        let readToTheEnd = KafkaPartitionLag(
            partition: partition, committed: 10, watermarks: KafkaWatermarks(low: 0, high: 13), position: 13)
        #expect(readToTheEnd.lag == 3)
        #expect(readToTheEnd.lagWhenIdle == 0)
        let behind = KafkaPartitionLag(partition: partition, committed: 10, watermarks: KafkaWatermarks(low: 0, high: 13), position: 11)
        #expect(behind.lagWhenIdle == 2)
        let notOwned = KafkaPartitionLag(partition: partition, committed: 10, watermarks: KafkaWatermarks(low: 0, high: 13))
        #expect(notOwned.lagWhenIdle == 3, "without a position nothing is known to be markers")
        let neverCommitted = KafkaPartitionLag(
            partition: partition, committed: nil, watermarks: KafkaWatermarks(low: 2, high: 5), position: 5)
        #expect(neverCommitted.lag == 3)
        #expect(neverCommitted.lagWhenIdle == 0)
    }
}

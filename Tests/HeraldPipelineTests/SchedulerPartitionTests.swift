import Foundation
import HeraldDomain
import Testing

@testable import HeraldPipeline

/// The life of a scheduler partition and its foreseen window, without a broker or Redis.
@Suite("Scheduler partition")
struct SchedulerPartitionTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)
    let instant = ContinuousClock.now

    static func release(at date: Date) -> SchedulerService.PreparedRelease {
        SchedulerService.PreparedRelease(
            at: date, messages: [], entry: ScheduleIndex.Entry(eventId: "e", revision: 1, nextReleaseAt: date, json: []),
            status: StatusRecord(
                eventId: "e", state: .scheduled, tasks: StatusRecord.Tasks(planned: 0), timings: StatusRecord.Timings(acceptedAt: date)),
            statusJSON: [], completedAtOffset: nil, released: [])
    }

    @Test("catching up defers cancels; reaching the end releases and hands them back once")
    func catchingUp() {
        var partition = SchedulerPartition(catchingUpTo: 42)
        #expect(!partition.isReleasing)
        let first = partition.deferCancel("a")
        let second = partition.deferCancel("b")
        #expect(first && second)
        let early = partition.reached(position: 41)
        #expect(early == nil)
        let done = partition.reached(position: 42)
        #expect(done == ["a", "b"])
        #expect(partition.isReleasing)
        let again = partition.reached(position: 50)
        #expect(again == nil)
        let deferred = partition.deferCancel("c")
        #expect(!deferred, "a releasing partition handles a cancel at once")
        // An empty partition (end 0) is read as soon as it is assigned.
        var empty = SchedulerPartition(catchingUpTo: 0)
        let read = empty.reached(position: -1)
        #expect(read == [])
    }

    @Test("awaited cancels are forgotten after their time, the others kept")
    func awaitedCancels() {
        var partition = SchedulerPartition(catchingUpTo: 0)
        partition.awaitedCancels = ["old": instant - .seconds(700), "new": instant - .seconds(5)]
        let forgotten = partition.forgetAwaitedCancels(readBefore: instant - .seconds(600))
        #expect(forgotten == ["old"])
        #expect(Array(partition.awaitedCancels.keys) == ["new"])
    }

    @Test("a scan that saw everything foresees its window: no query until half of it is gone or something changes")
    func foreseenWindow() {
        var partition = SchedulerPartition(catchingUpTo: 0)
        _ = partition.reached(position: 0)
        #expect(partition.needsScan(now: now, at: .now, window: 10, limit: 100))
        #expect(!partition.hasNothingDue(at: now), "nothing is known before the first scan")
        partition.prepared["s1"] = Self.release(at: now.addingTimeInterval(3))
        partition.scanned(horizon: now.addingTimeInterval(10), found: 1, limit: 100, newlyPrepared: 1, batch: 500, at: instant)
        #expect(partition.hasNothingDue(at: now.addingTimeInterval(2)))
        #expect(!partition.hasNothingDue(at: now.addingTimeInterval(3)), "the prepared release is due")
        #expect(!partition.hasNothingDue(at: now.addingTimeInterval(10)), "past the window")
        let later = instant + .seconds(1)
        #expect(!partition.needsScan(now: now.addingTimeInterval(4), at: later, window: 10, limit: 100))
        #expect(partition.needsScan(now: now.addingTimeInterval(5), at: later, window: 10, limit: 100))
        partition.changed()
        #expect(partition.needsScan(now: now.addingTimeInterval(1), at: later, window: 10, limit: 100))
        #expect(!partition.hasNothingDue(at: now.addingTimeInterval(1)))
    }

    @Test("a scan that hit its limit or a full batch foresees nothing")
    func partialScans() {
        var partition = SchedulerPartition(catchingUpTo: 0)
        _ = partition.reached(position: 0)
        partition.scanned(horizon: now.addingTimeInterval(10), found: 100, limit: 100, newlyPrepared: 3, batch: 500, at: instant)
        #expect(!partition.hasNothingDue(at: now))
        partition.scanned(horizon: now.addingTimeInterval(10), found: 600, limit: 1_000, newlyPrepared: 500, batch: 500, at: instant)
        #expect(!partition.hasNothingDue(at: now))
        #expect(partition.needsScan(now: now, at: instant, window: 10, limit: 1_000), "a full batch scans again at once")
    }

    @Test("rounds wait up to 1 s when every partition is foreseen, 100 ms otherwise, and never past a prepared release")
    func pollTimeouts() {
        #expect(SchedulerPartition.pollTimeout([], now: now, window: 10) == .milliseconds(100))
        var foreseen = SchedulerPartition(catchingUpTo: 0)
        _ = foreseen.reached(position: 0)
        foreseen.scanned(horizon: now.addingTimeInterval(10), found: 0, limit: 100, newlyPrepared: 0, batch: 500, at: instant)
        #expect(SchedulerPartition.pollTimeout([foreseen], now: now, window: 10) == .milliseconds(1_000))
        let catchingUp = SchedulerPartition(catchingUpTo: 9)
        #expect(SchedulerPartition.pollTimeout([foreseen, catchingUp], now: now, window: 10) == .milliseconds(100))
        // Half the window nearly gone: the next round comes when a scan is due.
        #expect(SchedulerPartition.pollTimeout([foreseen], now: now.addingTimeInterval(4.7), window: 10) == .milliseconds(300))
        foreseen.prepared["s"] = Self.release(at: now.addingTimeInterval(0.25))
        #expect(SchedulerPartition.pollTimeout([foreseen], now: now, window: 10) == .milliseconds(251))
        #expect(SchedulerPartition.pollTimeout([foreseen], now: now.addingTimeInterval(1), window: 10) == .milliseconds(10))
    }
}

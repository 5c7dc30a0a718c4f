@testable import HeraldPipeline
import Testing

/// What `/health/ready` and `/health/live` are computed from.
@Suite("Progress board")
struct ProgressBoardTests {
    @Test("a loop waiting for its group's partitions is stalled, named with that reason; an assignment clears it")
    func waitingForPartitionsIsAStall() {
        let board = ProgressBoard()
        let idle = board.register("idle-loop")
        let waiting = board.register("waiting-loop")
        defer {
            board.unregister(idle)
            board.unregister(waiting)
        }
        let now = ContinuousClock.now
        waiting.waitingForPartitions(.seconds(90), now: now)
        let stalled = board.stalled(longerThan: .seconds(60), now: now)
        #expect(stalled.map(\.name) == ["waiting-loop"])
        #expect(stalled.first?.reason == .waitingForPartitions)
        #expect(stalled.first.map { $0.stall >= .seconds(90) } == true)
        #expect(board.stalled(longerThan: .seconds(120), now: now).isEmpty)

        waiting.waitingForPartitions(.zero, now: now)
        #expect(board.stalled(longerThan: .zero, now: now + .seconds(1)).isEmpty)
    }

    @Test("holding input and waiting report the longer of the two")
    func longerStallWins() {
        let board = ProgressBoard()
        let loop = board.register("loop")
        defer { board.unregister(loop) }
        loop.holding()
        let now = ContinuousClock.now + .seconds(10)
        loop.waitingForPartitions(.seconds(30), now: now)
        #expect(board.stalled(longerThan: .seconds(20), now: now).first?.reason == .waitingForPartitions)
        loop.waitingForPartitions(.zero, now: now)
        #expect(board.stalled(longerThan: .seconds(5), now: now).first?.reason == .holdingInput)
    }
}

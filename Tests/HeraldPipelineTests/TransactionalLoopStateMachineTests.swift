import Foundation
import HeraldKafka
@testable import HeraldPipeline
import HeraldRedis
import Testing

/// The loop's recovery rules, without a broker: what is committed next, and what happens
/// after each kind of failure.
@Suite("Transactional loop state machine")
struct TransactionalLoopStateMachineTests {
    static func records(_ offsets: ClosedRange<Int64>) -> [KafkaMessage] {
        offsets.map { KafkaMessage(topic: "herald.tasks", partition: 1, offset: $0, key: nil, value: Array("\($0)".utf8)) }
    }
    struct Unreadable: Error {}
    let now = Date(timeIntervalSince1970: 0)

    @Test("a batch commits as one part; a commit resets the failures")
    func commitsWholeBatches() throws {
        var machine = TransactionalLoopStateMachine()
        machine.received(Self.records(0...2))
        let part = try #require(machine.nextPart)
        #expect(part.work.map(\.offset) == [0, 1, 2] && part.records.count == 3 && part.deadLetters.isEmpty)
        #expect(machine.partCommitted().isEmpty)
        #expect(machine.isBatchDone && machine.nextPart == nil && machine.failures == 0)
    }

    @Test("an infrastructure failure rewinds: by seeking unless Kafka failed, backing off longer each time up to 5 s")
    func transientFailuresRewind() {
        var machine = TransactionalLoopStateMachine()
        var delays: [Duration] = []
        for error: any Error in [
            RedisError(code: .io, message: "reset"),
            KafkaError(code: KafkaError.Code(rawValue: -1), message: "fenced", operation: "commit"),
        ] {
            machine.received(Self.records(0...3))
            let seek = !(error is KafkaError)
            guard case .rewind(let delay, seek) = machine.partFailed(error, canDeadLetter: true, now: now) else {
                Issue.record("no rewind after \(error)")
                return
            }
            delays.append(delay)
            #expect(machine.isBatchDone, "the rest of the batch is read again, not committed")
        }
        #expect(delays == [.milliseconds(200), .milliseconds(400)])
        for _ in 0..<10 { _ = machine.partFailed(RedisError(code: .io, message: "reset"), canDeadLetter: true, now: now) }
        #expect(machine.backoff == .seconds(5))
    }

    @Test("without a dead-letter topic a bad record is retried like an outage, never skipped")
    func noDeadLetterTopic() {
        var machine = TransactionalLoopStateMachine()
        machine.received(Self.records(0...1))
        #expect(machine.partFailed(Unreadable(), canDeadLetter: false, now: now) == .rewind(after: .milliseconds(200), seek: true))
    }

    @Test("a failure naming its record dead-letters that record; the retry handles the others and writes the letter")
    func namedRecord() throws {
        var machine = TransactionalLoopStateMachine()
        let batch = Self.records(0...2)
        machine.received(batch)
        let failure = PermanentRecordFailure(reason: "unreadable_task", message: "bad", source: batch[1])
        #expect(machine.partFailed(failure, canDeadLetter: true, now: now) == .deadLetter(source: "herald.tasks/1/1"))
        let retry = try #require(machine.nextPart)
        #expect(retry.work.map(\.offset) == [0, 2] && retry.deadLetters.map(\.reason) == ["unreadable_task"])
        #expect(retry.records.count == 3, "the dead-lettered record's offset is committed with the others")
        #expect(machine.partCommitted().map(\.sourceOffset) == [1])
        #expect(machine.isBatchDone)
    }

    @Test("every unreadable record of a batch is found in one pass and dead-lettered in one retry, each letter once")
    func everyBadRecordAtOnce() throws {
        var machine = TransactionalLoopStateMachine()
        var batch = Self.records(0...5)
        batch[1].value = nil
        batch[4].value = Array("not a number".utf8)
        machine.received(batch)
        let error = #expect(throws: PermanentRecordFailure.self) {
            try PermanentRecordFailure.mapAll(batch) { record -> Int in
                guard let value = record.value, let number = Int(String(decoding: value, as: UTF8.self)) else {
                    throw PermanentRecordFailure(reason: "unreadable_task", message: "bad", source: record)
                }
                return number
            }
        }
        let failure = try #require(error)
        #expect(failure.alongside.map(\.source.offset) == [4])
        #expect(machine.partFailed(failure, canDeadLetter: true, now: now) == .deadLetter(source: "herald.tasks/1/1"))
        let retry = try #require(machine.nextPart)
        #expect(retry.work.map(\.offset) == [0, 2, 3, 5] && retry.deadLetters.count == 2)
        #expect(machine.partCommitted().map(\.sourceOffset).sorted() == [1, 4])
        #expect(machine.isBatchDone)
    }

    @Test("an unattributed permanent failure splits the batch into single records to find the one at fault")
    func isolation() throws {
        var machine = TransactionalLoopStateMachine()
        machine.received(Self.records(0...2))
        #expect(machine.partFailed(Unreadable(), canDeadLetter: true, now: now) == .isolate(records: 3))
        #expect(machine.nextPart?.records.map(\.offset) == [0])
        _ = machine.partCommitted()
        #expect(machine.partFailed(Unreadable(), canDeadLetter: true, now: now) == .deadLetter(source: "herald.tasks/1/1"))
        let letterOnly = try #require(machine.nextPart)
        #expect(letterOnly.work.isEmpty && letterOnly.deadLetters.map(\.reason) == ["processing_failed"])
        _ = machine.partCommitted()
        #expect(machine.nextPart?.records.map(\.offset) == [2])
        // Writing nothing but the dead letter failing again is the infrastructure's fault.
        machine.received(Self.records(5...5))
        _ = machine.partFailed(Unreadable(), canDeadLetter: true, now: now)
        #expect(machine.nextPart?.work.isEmpty == true)
        guard case .rewind = machine.partFailed(Unreadable(), canDeadLetter: true, now: now) else {
            Issue.record("a failing dead letter must rewind")
            return
        }
    }

    @Test("creating the clients is retried with backoff, and given up after 20 failures in a row")
    func clientCreation() {
        var machine = TransactionalLoopStateMachine()
        for attempt in 1...20 {
            guard case .retry = machine.clientsFailed() else {
                Issue.record("gave up after \(attempt)")
                return
            }
        }
        #expect(machine.clientsFailed() == .giveUp)
    }
}

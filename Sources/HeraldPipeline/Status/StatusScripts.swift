import Foundation
import HeraldDomain
import HeraldRedis
import HeraldRegistry
import HeraldStreams

/// The Lua scripts behind per-event status in Redis (keys in docs/redis-layout.md).
enum StatusScripts {
    /// Folds one finished task into `herald:{e}:progress:<eventId>`, counting each task index
    /// once however often the task is retried (a crashed worker's transaction is redone, and
    /// its Redis side effects must not count twice). The task that brings `done` up to the
    /// task count is recorded in `completedBy`: it alone reports completion, and a retry of it
    /// reports again. Replies with the whole hash.
    ///
    /// KEYS[1] progress hash. ARGV: task index, task count, TTL seconds, finishedAt ms,
    /// firstDeliveryAt ms or "", then field/increment pairs.
    static let recordProgress = RedisScript(
        #"""
        local key = KEYS[1]
        if redis.call('HSETNX', key, 'task:' .. ARGV[1], '1') == 1 then
          for i = 6, #ARGV, 2 do
            redis.call('HINCRBY', key, ARGV[i], ARGV[i + 1])
          end
          if ARGV[5] ~= '' then
            local first = redis.call('HGET', key, 'firstDeliveryAt')
            if not first or tonumber(ARGV[5]) < tonumber(first) then
              redis.call('HSET', key, 'firstDeliveryAt', ARGV[5])
            end
          end
          local finished = redis.call('HGET', key, 'finishedAt')
          if not finished or tonumber(ARGV[4]) > tonumber(finished) then
            redis.call('HSET', key, 'finishedAt', ARGV[4])
          end
          local done = redis.call('HINCRBY', key, 'done', 1)
          if done >= tonumber(ARGV[2]) then
            redis.call('HSETNX', key, 'completedBy', ARGV[1])
          end
        end
        redis.call('EXPIRE', key, ARGV[3])
        return redis.call('HGETALL', key)
        """#)

    /// Writes `herald:status:<eventId>` unless it would move the status backwards: a
    /// `completed`, `expired` or `cancelled` status is final (only the same state may be
    /// written again, by a retried task), a schedule's `scheduled` or `released` never
    /// replaces what the fan-out wrote after the release, and a record with fewer finished
    /// tasks never replaces one with more. Tasks finish in any order on many workers, so the last writer is not
    /// necessarily the newest news.
    ///
    /// KEYS[1] status key. ARGV: record JSON, state, finished task count, TTL seconds.
    /// Replies 1 when written, 0 when kept.
    static let writeStatus = RedisScript(
        #"""
        local current = redis.call('GET', KEYS[1])
        if current then
          local ok, doc = pcall(cjson.decode, current)
          if ok and type(doc) == 'table' then
            local state = doc['state']
            if (state == 'completed' or state == 'expired' or state == 'cancelled') and state ~= ARGV[2] then
              return 0
            end
            if ARGV[2] == 'scheduled' and state ~= 'scheduled' then
              return 0
            end
            if ARGV[2] == 'released' and state ~= 'scheduled' and state ~= 'released' then
              return 0
            end
            local done = 0
            if type(doc['tasks']) == 'table' and tonumber(doc['tasks']['completed']) then
              done = tonumber(doc['tasks']['completed'])
            end
            if tonumber(ARGV[3]) < done then
              return 0
            end
          end
        end
        redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[4])
        return 1
        """#)

    /// The `writeStatus` call that stores `record` for `ttlSeconds` (a scheduled event's for
    /// that long after its last release).
    static func write(_ record: StatusRecord, layout: SlotLayout, ttlSeconds: Int, now: Date = Date()) -> RedisCommand {
        write(record, encoded: StatusCoding.encode(record), layout: layout, ttlSeconds: ttlSeconds, now: now)
    }

    /// The same, with the record's JSON (`StatusCoding.encode`) already made.
    static func write(_ record: StatusRecord, encoded: [UInt8], layout: SlotLayout, ttlSeconds: Int, now: Date = Date()) -> RedisCommand {
        let waiting = record.schedule?.releases.map(\.releaseAt).max().map { max(0, Int($0.timeIntervalSince(now).rounded(.up))) } ?? 0
        return .evalScript(
            writeStatus, keys: [layout.hub(record.hub).statusKey(eventId: record.eventId)],
            arguments: [
                String(decoding: encoded, as: UTF8.self), record.state.rawValue,
                String(record.tasks.completed), String(ttlSeconds + waiting),
            ]
        )
    }
}

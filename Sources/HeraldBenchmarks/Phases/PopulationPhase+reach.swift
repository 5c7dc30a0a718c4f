import Foundation
import HeraldDomain
import HeraldLocalPush
import HeraldPipeline
import HeraldRedis

/// The reach rows: what a reader feels. The phase's broadcast goes from its publish through the
/// fan-out workers and `herald worker --roles sender` processes to the local APNs and FCM
/// servers, all on this machine, and is timed by its own status (`reach`: deliveries committed,
/// receipts `sent`) until every push was answered.
extension PopulationPhase.Context {
    /// One broadcast per entry of `senders` (that many sender workers, started for it and stopped
    /// after), each after a warm-up that brings every sender into its group; the local servers'
    /// ceilings first, measured by h2load with one sender's connections and streams.
    func reach(senders: [Int], expected: Int, warmupExpected: Int) async throws -> BenchmarkReport.Reach {
        let push = try await LocalPushServices.start(threads: 1)
        push.apns.recordRequests = false
        push.fcm.recordRequests = false
        var running: [WorkerProcess] = []
        do {
            let requests = min(max(expected / 5, 20_000), 200_000)
            let apns = try await SenderPhase.measureCeiling(push, requests: requests)
            let fcm = try await SenderPhase.measureFCMCeiling(push, requests: requests)
            if let apnsRate = apns.0, let fcmRate = fcm.0 {
                Console.say("  h2load: APNs \(Console.fixed(apnsRate, 0))/s, FCM \(Console.fixed(fcmRate, 0))/s")
            } else {
                Console.say("  h2load not found (apt-get install nghttp2-client): no ceilings")
            }
            var report = BenchmarkReport.Reach(
                population: phase.population.count, apnsCeilingPerSecond: apns.0, fcmCeilingPerSecond: fcm.0,
                ceilingCommand: apns.1.map { _ in
                    H2Load.command(requests: requests, connections: SenderPhase.connections, streams: SenderPhase.streams)
                },
                connections: SenderPhase.connections, streams: SenderPhase.streams)
            var settings = push.environment
            settings["HERALD_PUSH_CONNECTIONS"] = String(SenderPhase.connections)
            settings["HERALD_PUSH_STREAMS"] = String(SenderPhase.streams)
            for (run, count) in senders.enumerated() {
                running = try (0..<count).map { index in
                    let spec = WorkerSpec(names: phase.names, index: 100 + run * 10 + index, roles: "sender", environment: settings)
                    return try WorkerProcess(
                        launch: phase.environment.workerLaunch(spec), spec: spec, logDirectory: phase.environment.workDirectory)
                }
                try await warmUpSenders(running, run: run, expected: warmupExpected)
                report.runs.append(try await reachRun(senders: running, expected: expected))
                for worker in running { await worker.stop() }
                running = []
            }
            await push.shutdown()
            return report
        } catch {
            for worker in running where !worker.isRunning {
                Console.say("sender \(worker.spec.instanceId) exited; last log lines (\(worker.logFile.path)):\n\(worker.logTail())")
            }
            for worker in running { await worker.stop() }
            await push.shutdown()
            throw error
        }
    }

    /// Warm-up broadcasts to the warm-up tag until one is pushed in full within 1.5 s (the
    /// second at the earliest): the senders have joined their group and opened their
    /// connections. The first senders of the phase also push every delivery before them.
    private func warmUpSenders(_ senders: [WorkerProcess], run: Int, expected: Int) async throws {
        for attempt in 1...8 {
            let started = ContinuousClock.now
            let event = BenchmarkEvents.warmup(id: "\(phase.names.redisPrefix)-warmup-senders-\(run)-\(attempt)")
            try await publisher.publish(event)
            _ = try await awaitPushed(event.id!, expected: expected, senders: senders) { _ in }
            let took = ContinuousClock.now - started
            Console.say("  \(senders.count) sender(s), warm-up \(attempt): \(Console.fixed(took.milliseconds, 0)) ms")
            if attempt >= 2 && took < .milliseconds(1_500) { return }
        }
    }

    /// The measured broadcast: published once the machine is quiet, timed by its status.
    private func reachRun(senders: [WorkerProcess], expected: Int) async throws -> BenchmarkReport.Reach.Run {
        let event = BenchmarkEvents.broadcast(id: "\(phase.names.redisPrefix)-broadcast-\(senders.count)-senders")
        _ = await phase.meter.waitForQuiet(workers: workers + senders)
        func cpu(_ processes: [WorkerProcess]) -> Double { processes.map { $0.cpuSeconds ?? 0 }.reduce(0, +) }
        func rss(_ processes: [WorkerProcess]) -> Int { processes.map { $0.rssBytes ?? 0 }.max() ?? 0 }
        let baselineRSS = rss(senders)
        let senderCPU = cpu(senders)
        let fanoutCPU = cpu(workers)
        var tenthRSS: Int?
        Console.say("  \(senders.count) sender(s): publishing \(event.id!) to \(Console.count(expected)) devices")
        try await publisher.publish(event, now: Date())
        let status = try await awaitPushed(event.id!, expected: expected, senders: senders) { sent in
            if tenthRSS == nil && sent >= expected / 10 { tenthRSS = rss(senders) }
        }
        let senderSeconds = cpu(senders) - senderCPU
        let fanoutSeconds = cpu(workers) - fanoutCPU
        let sent = status.reach?.sent
        let sentByPlatform = (status.push ?? [:]).compactMapValues { $0["sent"] }
        let sentCount = sentByPlatform.values.reduce(0, +)
        let seconds = Double(sent?.latestMs ?? 0) / 1_000
        let result = BenchmarkReport.Reach.Run(
            senders: senders.count, expected: expected, committed: status.reach?.committed, sent: sent, sentByPlatform: sentByPlatform,
            notSent: status.pushReceiptCount - sentCount, pushesPerSecond: seconds > 0 ? Double(sentCount) / seconds : 0,
            senderCPUSeconds: senderSeconds, fanoutCPUSeconds: fanoutSeconds, senderBaselineRSSBytes: baselineRSS,
            senderTenthRSSBytes: tenthRSS ?? 0, senderPeakRSSBytes: senders.map { $0.peakRSSBytes ?? 0 }.max() ?? 0)
        func ms(_ value: Int64?) -> String { value.map { Console.fixed(Double($0) / 1_000, 2) + " s" } ?? "-" }
        Console.say(
            "  \(senders.count) sender(s): \(Console.count(sentCount)) sent (\(sentByPlatform.sorted { $0.key < $1.key }.map { "\($0.key) \(Console.count($0.value))" }.joined(separator: ", "))); committed all \(ms(status.reach?.committed?.allMs)); sent 50 % \(ms(sent?.p50Ms)), 90 % \(ms(sent?.p90Ms)), 99 % \(ms(sent?.p99Ms)), all \(ms(sent?.allMs)); \(Console.fixed(result.pushesPerSecond, 0))/s, sender CPU \(Console.fixed(senderSeconds / Double(max(sentCount, 1)) * 1e6, 1)) us per push"
        )
        return result
    }

    /// The event's status once every delivery has a receipt (`push` counts up to
    /// `targets.total`, the fan-out completed), read every 100 ms and told to `progress` (receipts
    /// `sent` so far). Fails when a sender exits, or when neither the receipts nor the status
    /// moved for the run's event timeout.
    private func awaitPushed(
        _ eventId: String, expected: Int, senders: [WorkerProcess], progress: (Int) -> Void
    ) async throws -> StatusRecord {
        let pool = RedisConnectionPool(configuration: phase.configuration.redis, size: 1)
        defer { pool.shutdown() }
        let reader = StatusReader(pool: pool, layout: phase.configuration.layout)
        var seen = (receipts: -1, state: "")
        var moved = ContinuousClock.now
        while true {
            if let status = try await reader.status(eventId: eventId) {
                let receipts = status.pushReceiptCount
                progress((status.push ?? [:]).values.compactMap { $0["sent"] }.reduce(0, +))
                if status.state.isTerminal && receipts >= status.targets.total {
                    guard status.targets.total == expected else {
                        throw BenchmarkError(
                            "\(eventId) reached \(Console.count(status.targets.total)) devices, expected \(Console.count(expected))",
                            code: "reach_audience")
                    }
                    return status
                }
                if receipts != seen.receipts || status.state.rawValue != seen.state {
                    seen = (receipts, status.state.rawValue)
                    moved = .now
                }
            }
            if let exited = senders.first(where: { !$0.isRunning }) {
                throw BenchmarkError("the sender \(exited.spec.instanceId) exited; its log: \(exited.logFile.path)", code: "worker_exited")
            }
            guard ContinuousClock.now - moved < .seconds(options.eventTimeoutSeconds) else {
                throw BenchmarkError(
                    "\(eventId): no receipt for \(options.eventTimeoutSeconds) s (\(Console.count(max(seen.receipts, 0))) of \(Console.count(expected)))",
                    code: "reach_stalled")
            }
            try await Task.sleep(for: .milliseconds(100))
        }
    }
}

import Foundation
@testable import HeraldBenchmarks
import Testing

@Suite("Reading CPU time from /proc")
struct ProcessProbeTests {
    @Test("a stat line's name may hold spaces and parentheses; the ticks are utime plus stime")
    func statLine() throws {
        let line = "4242 (rdk:broker (1) x) S 1 2 3 4 5 6 7 8 9 10 250 50 0 0 20 0 1 0 100 0 0"
        let parsed = try #require(ProcessProbe.statTicks(line))
        #expect(parsed.name == "rdk:broker (1) x")
        #expect(parsed.ticks == 300)
        #expect(ProcessProbe.statTicks("4242 rdk S 1") == nil)
        #expect(ProcessProbe.statTicks("4242 (short) S 1 2 3") == nil)
    }

    @Test("a thread's CPU counts under its name's prefix only, and all threads add up to the process")
    func threadsByName() throws {
        let pid = getpid()
        // A thread with a known name (at most 15 bytes on Linux) burns CPU, then stays alive
        // until the counts are read: threads that ended are no longer listed.
        let name = "probe-test-\(Int.random(in: 1_000...9_999))"
        let burned = DispatchSemaphore(value: 0)
        let read = DispatchSemaphore(value: 0)
        let thread = Thread {
            // Named from inside, as librdkafka names its threads (Linux: the thread's comm).
            try? name.write(toFile: "/proc/thread-self/comm", atomically: false, encoding: .utf8)
            // Until the thread itself has run 0.1 s, however long a loaded machine takes to
            // give it that (a wall-clock budget once gave it 0.04 s under make test's load).
            var x = 0.0
            var used = timespec()
            repeat {
                for _ in 0..<10_000 { x += sin(x) + 1 }
                clock_gettime(CLOCK_THREAD_CPUTIME_ID, &used)
            } while used.tv_sec == 0 && used.tv_nsec < 100_000_000
            if x < 0 { print(x) }
            burned.signal()
            read.wait()
        }
        thread.start()
        burned.wait()
        defer { read.signal() }
        let named = try #require(ProcessProbe.threadCPUSeconds(pid: pid, namePrefix: name))
        let all = try #require(ProcessProbe.threadCPUSeconds(pid: pid, namePrefix: ""))
        let process = try #require(ProcessProbe.cpuSeconds(pid: pid))
        #expect(named >= 0.05)
        #expect(ProcessProbe.threadCPUSeconds(pid: pid, namePrefix: "no-thread-is-named-so") == 0)
        #expect(all >= named)
        #expect(all <= process + 0.02)
        #expect(ProcessProbe.threadCPUSeconds(pid: -1, namePrefix: "") == nil)
    }

    @Test("a process's CPU with its children counts a running child, and a reaped one through cutime")
    func childrenCount() throws {
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/bin/sh")
        child.arguments = ["-c", "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done; exec sleep 30"]
        try child.run()
        let pid = getpid()
        let deadline = Date().addingTimeInterval(60)
        while ProcessProbe.statTicks((try? String(contentsOfFile: "/proc/\(child.processIdentifier)/stat", encoding: .utf8)) ?? "")?.name
            != "sleep",
            Date() < deadline
        {
            usleep(10_000)
        }
        let burned = try #require(ProcessProbe.cpuSeconds(pid: child.processIdentifier))
        #expect(burned >= 0.05)
        // Our own CPU first: the other tests' threads keep adding to it, so read after, it could
        // pass what the total with children showed a moment before.
        let ownRunning = try #require(ProcessProbe.cpuSeconds(pid: pid))
        let running = try #require(ProcessProbe.cpuSecondsWithChildren(pid: pid))
        #expect(running >= ownRunning + burned - 0.011)
        kill(child.processIdentifier, SIGKILL)
        child.waitUntilExit()
        let ownReaped = try #require(ProcessProbe.cpuSeconds(pid: pid))
        let reaped = try #require(ProcessProbe.cpuSecondsWithChildren(pid: pid))
        #expect(reaped >= ownReaped + burned - 0.011)
        #expect(ProcessProbe.cpuSecondsWithChildren(pid: -1) == nil)
    }
}

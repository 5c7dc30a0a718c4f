import Foundation

/// Reads what Linux reports about a process: CPU time from `/proc/<pid>/stat`, memory from
/// `/proc/<pid>/status` (`VmHWM` is the peak resident set size since the process started).
enum ProcessProbe {
    /// User plus system CPU seconds consumed so far.
    static func cpuSeconds(pid: Int32) -> Double? {
        // Fields after the command name start at field 3 (state); utime and stime are 14 and 15.
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let parsed = statTicks(text)
        else { return nil }
        return parsed.ticks / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// `cpuSeconds` plus the CPU of the process's children: those still running (their own
    /// `stat`) and those already ended and reaped (`cutime` and `cstime`, fields 16 and 17), so
    /// a child's time moves from one term to the other when it ends and the sum stays whole.
    /// Redis rewrites its log and saves its snapshots in forked children; this counts that
    /// work as Redis's rather than as other processes'.
    static func cpuSecondsWithChildren(pid: Int32) -> Double? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let fields = statFields(text), fields.count > 14,
            let user = Double(fields[11]), let system = Double(fields[12]),
            let childrenUser = Double(fields[13]), let childrenSystem = Double(fields[14])
        else { return nil }
        var ticks = user + system + childrenUser + childrenSystem
        let processes = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        for entry in processes where entry.first?.isNumber == true {
            guard let child = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                let childFields = statFields(child), childFields.count > 12, childFields[1] == Substring(String(pid)),
                let childUser = Double(childFields[11]), let childSystem = Double(childFields[12])
            else { continue }
            ticks += childUser + childSystem
        }
        return ticks / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// User plus system CPU seconds of the threads of `pid` whose name starts with `prefix`
    /// (`/proc/<pid>/task/<tid>/stat`). librdkafka names its threads `rdk:main`, `rdk:broker<id>`
    /// and so on, so `rdk:` separates its own work (batching, compression, the protocol) from the
    /// application threads that call it. Threads that ended before the read are not counted.
    static func threadCPUSeconds(pid: Int32, namePrefix prefix: String) -> Double? {
        guard let threads = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task") else { return nil }
        var ticks = 0.0
        for thread in threads {
            guard let text = try? String(contentsOfFile: "/proc/\(pid)/task/\(thread)/stat", encoding: .utf8),
                let parsed = statTicks(text), parsed.name.hasPrefix(prefix)
            else { continue }
            ticks += parsed.ticks
        }
        return ticks / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// The thread or process name and its user plus system ticks, from one `stat` line
    /// (`pid (name) state ...`; the name may itself contain spaces and parentheses).
    static func statTicks(_ text: String) -> (name: Substring, ticks: Double)? {
        guard let open = text.firstIndex(of: "("), let close = text.lastIndex(of: ")"), open < close,
            let fields = statFields(text), fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12])
        else { return nil }
        return (text[text.index(after: open)..<close], user + system)
    }

    /// The fields of a `stat` line after the name, from field 3 (state) on: ppid is `[1]`,
    /// utime and stime `[11]` and `[12]`, cutime and cstime `[13]` and `[14]`.
    static func statFields(_ text: String) -> [Substring]? {
        guard let close = text.lastIndex(of: ")") else { return nil }
        return text[text.index(after: close)...].split(separator: " ")
    }

    /// CPU seconds the whole machine spent busy (every core: user, nice, system, irq, softirq,
    /// steal) since boot, from the first line of `/proc/stat`.
    static func machineBusySeconds() -> Double? {
        guard let text = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
            let line = text.split(separator: "\n").first, line.hasPrefix("cpu ")
        else { return nil }
        let ticks = line.split(separator: " ").dropFirst().compactMap { Double($0) }
        guard ticks.count >= 8 else { return nil }
        let busy = ticks[0] + ticks[1] + ticks[2] + ticks[5] + ticks[6] + ticks[7]
        return busy / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// Share of time (0...100) some runnable task waited for a CPU over the last 10 s
    /// (`/proc/pressure/cpu`, `some avg10`): how contended the machine is.
    static func cpuPressure() -> Double? {
        guard let text = try? String(contentsOfFile: "/proc/pressure/cpu", encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("some") }),
            let field = line.split(separator: " ").first(where: { $0.hasPrefix("avg10=") })
        else { return nil }
        return Double(field.dropFirst("avg10=".count))
    }

    /// A `kB` field of `/proc/<pid>/status` (`VmHWM`, `VmRSS`) in bytes.
    static func statusBytes(pid: Int32, field: String) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
            let digits = line.dropFirst(field.count + 1).filter(\.isNumber)
            return Int(digits).map { $0 * 1_024 }
        }
        return nil
    }

    /// The first process whose command line contains every one of `needles`, with that
    /// command line (arguments joined by spaces).
    static func find(commandLineContaining needles: [String]) -> (pid: Int32, commandLine: String)? {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return nil }
        let own = ProcessInfo.processInfo.processIdentifier
        for entry in entries {
            guard let pid = Int32(entry), pid != own,
                let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline"), !data.isEmpty
            else { continue }
            let commandLine = String(decoding: data.map { $0 == 0 ? UInt8(ascii: " ") : $0 }, as: UTF8.self)
            if needles.allSatisfy({ commandLine.contains($0) }) { return (pid, commandLine) }
        }
        return nil
    }
}

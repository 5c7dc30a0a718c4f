import HeraldKafka

#if canImport(CMalloc)
    import CMalloc
#endif

/// glibc `malloc` thresholds for a process that produces to Kafka at full speed.
///
/// librdkafka's broker threads build every produce request in memory they allocate for it:
/// the batch (up to `batch.size`, 1 MB for the fan-out lanes) and its compressed copy, both
/// freed once the broker has answered. glibc's defaults adapt: the mmap threshold starts at
/// 128 KiB and rises to the largest block freed so far, and the trim threshold follows at
/// twice that. So as soon as about 2 MiB is free at the top of a heap, glibc gives it back to
/// the kernel, and the next batch faults the same pages in again (and the kernel zeroes them).
/// In a 1M broadcast that was 100,000-180,000 minor page faults in the lanes' librdkafka
/// threads and 0.3-0.6 CPU-s of system time (docs/decisions/lane-producer.md).
///
/// Fixed thresholds (setting any of them turns glibc's adaptation off) keep those buffers in
/// the heap for the next batch. The memory kept is memory the process already used at its
/// peak, so the peak RSS grows little (a few MB in `make bench`); what changes is that it is
/// not handed back between batches. Linux with glibc only; elsewhere `apply()` does nothing.
public struct MallocTuning: Sendable, Equatable, CustomStringConvertible {
    /// Blocks at least this large get a mapping of their own (glibc allows at most 32 MiB).
    public var mmapThreshold: Int32
    /// Free memory at the top of a heap beyond this is given back to the kernel.
    public var trimThreshold: Int32
    /// Extra memory asked of the kernel whenever a heap grows.
    public var topPad: Int32

    public init(mmapThreshold: Int32, trimThreshold: Int32, topPad: Int32) {
        self.mmapThreshold = mmapThreshold
        self.trimThreshold = trimThreshold
        self.topPad = topPad
    }

    /// Herald's choice: every librdkafka buffer (batches up to several MB) stays in the heap,
    /// and a heap keeps up to 256 MiB free before trimming.
    public static let producer = MallocTuning(mmapThreshold: 32 << 20, trimThreshold: 256 << 20, topPad: 16 << 20)

    /// Environment variables through which an operator tunes glibc's `malloc` directly. When
    /// one is set, the operator's values stand and Herald leaves `malloc` alone.
    public static let glibcVariables = [
        "MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_", "MALLOC_MMAP_MAX_",
    ]

    /// The first variable of `environment` that tunes glibc's `malloc` itself (one of
    /// `glibcVariables`, or `GLIBC_TUNABLES` naming a `glibc.malloc.` tunable), if any.
    public static func operatorTuning(in environment: [String: String]) -> String? {
        if let name = glibcVariables.first(where: { environment[$0] != nil }) { return name }
        if let tunables = environment["GLIBC_TUNABLES"], tunables.contains("glibc.malloc.") { return "GLIBC_TUNABLES" }
        return nil
    }

    /// Sets the thresholds for the whole process. False if glibc refused one (or this is not
    /// glibc); the values set before the refused one stay.
    @discardableResult
    public func apply() -> Bool {
        #if os(Linux) && canImport(Glibc)
            return mallopt(M_MMAP_THRESHOLD, mmapThreshold) == 1
                && mallopt(M_TRIM_THRESHOLD, trimThreshold) == 1
                && mallopt(M_TOP_PAD, topPad) == 1
        #else
            return false
        #endif
    }

    public var description: String {
        "mmap threshold \(mmapThreshold >> 20) MiB, trim threshold \(trimThreshold >> 20) MiB, top pad \(topPad >> 20) MiB"
    }
}

/// What a process does about glibc's `malloc` (`HERALD_ALLOCATOR`, see `MallocTuning`).
public enum AllocatorPlan: Equatable, Sendable, CustomStringConvertible {
    /// Fixed thresholds, set by `HeraldSettings.applyAllocator()`.
    case tune(MallocTuning)
    /// `HERALD_ALLOCATOR=glibc`: glibc's adaptive defaults.
    case glibcDefaults
    /// The operator tunes glibc directly through this variable; its values stand.
    case operatorTuning(variable: String)

    public var description: String {
        switch self {
        case .tune(let tuning): "tuned (\(tuning))"
        case .glibcDefaults: "glibc defaults"
        case .operatorTuning(let variable): "glibc, as \(variable) sets it"
        }
    }
}

extension HeraldSettings {
    /// The plan for this process's `malloc`, given its environment (where glibc reads its own
    /// `MALLOC_*_` variables and `GLIBC_TUNABLES`).
    public func allocatorPlan(environment: [String: String]) throws -> AllocatorPlan {
        switch self[.allocator].lowercased() {
        case "tuned":
            if let variable = MallocTuning.operatorTuning(in: environment) { return .operatorTuning(variable: variable) }
            return .tune(.producer)
        case "glibc":
            return .glibcDefaults
        default:
            throw SettingError(key: .allocator, value: self[.allocator], expected: "tuned or glibc")
        }
    }

    /// Carries out `allocatorPlan(environment:)` for the whole process. Commands that run Kafka
    /// producers call it first, before any client allocates.
    @discardableResult
    public func applyAllocator(environment: [String: String]) throws -> AllocatorPlan {
        let plan = try allocatorPlan(environment: environment)
        if case .tune(let tuning) = plan { tuning.apply() }
        return plan
    }
}

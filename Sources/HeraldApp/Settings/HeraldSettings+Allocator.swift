import HeraldKafka

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

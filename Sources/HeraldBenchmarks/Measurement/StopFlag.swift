import Synchronization

/// A flag one task sets and others poll (for example "the broadcast has completed").
final class StopFlag: Sendable {
    private let value = Atomic<Bool>(false)

    func set() { value.store(true, ordering: .releasing) }
    var isSet: Bool { value.load(ordering: .acquiring) }
}

/// A counter shared by threads: hands out work (`take`) and counts what is done (`add`).
final class SharedCounter: Sendable {
    private let value: Atomic<Int>

    init(_ initial: Int = 0) { value = Atomic(initial) }

    /// Adds `amount` and returns the value before.
    @discardableResult
    func add(_ amount: Int) -> Int { value.add(amount, ordering: .relaxed).oldValue }
    var current: Int { value.load(ordering: .relaxed) }
}

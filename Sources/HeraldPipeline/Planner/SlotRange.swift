/// Splits the slot space `0..<slotCount` into contiguous ranges, one per fan-out task.
///
/// Ranges differ in size by at most one slot, so the tasks of a broadcast take about the
/// same time and the last task does not become the tail everybody waits for.
public enum SlotRange {
    /// `count` ranges (fewer when there are fewer slots), in slot order, covering every slot once.
    public static func split(slotCount: Int, into count: Int) -> [Range<Int>] {
        precondition(slotCount > 0, "slot count must be positive")
        let parts = max(1, min(count, slotCount))
        let base = slotCount / parts
        let extra = slotCount % parts
        var ranges: [Range<Int>] = []
        ranges.reserveCapacity(parts)
        var lower = 0
        for index in 0..<parts {
            let upper = lower + base + (index < extra ? 1 : 0)
            ranges.append(lower..<upper)
            lower = upper
        }
        return ranges
    }
}

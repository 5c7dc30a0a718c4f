/// A `Duration` in the units logs, metrics and Redis want, written once.
extension Duration {
    /// Whole and fractional seconds.
    public var timeInterval: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
    /// Whole milliseconds, rounded toward zero.
    public var wholeMilliseconds: Int64 { components.seconds * 1_000 + components.attoseconds / 1_000_000_000_000_000 }
    /// Whole nanoseconds, rounded toward zero.
    public var wholeNanoseconds: Int64 { components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000 }
}

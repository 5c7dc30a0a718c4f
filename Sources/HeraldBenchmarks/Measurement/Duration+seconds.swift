extension Duration {
    /// The duration in seconds as a `Double`, for rates and reports.
    var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }

    var milliseconds: Double { seconds * 1_000 }
}

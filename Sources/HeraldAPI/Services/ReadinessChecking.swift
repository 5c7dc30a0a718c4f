/// Something `/health/ready` asks before saying the API can take traffic (Kafka and Redis
/// answer, for example).
public protocol ReadinessChecking: Sendable {
    func isReady() async -> Bool
}

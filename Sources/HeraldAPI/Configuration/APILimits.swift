import HeraldDomain

/// Size and paging bounds of the HTTP API. Document-level limits (tags per registration,
/// template size) come from the domain's ``RegistrationLimits`` so the API and the topic
/// consumers agree on what is valid.
public struct APILimits: Sendable, Hashable {
    /// Largest request body accepted, in bytes (default 512 KiB, the largest registration
    /// document; notification bodies are also held to the event limit). Bigger bodies get 413.
    public var maxRequestBytes: Int
    /// Page size when `limit` is absent.
    public var defaultPageSize: Int
    /// Largest `limit` a list request may ask for.
    public var maxPageSize: Int
    /// Tags, templates and sizes checked when registrations and installations are written
    /// (default: 1,000 tags, 64 KiB template bodies).
    public var registration: RegistrationLimits
    /// Operations in one JSON Patch document.
    public var maxPatchOperations: Int

    public init(
        maxRequestBytes: Int = RecordSizes.maxDocumentBytes, defaultPageSize: Int = 100, maxPageSize: Int = 1_000,
        registration: RegistrationLimits = .default, maxPatchOperations: Int = 256
    ) {
        self.maxRequestBytes = maxRequestBytes
        self.defaultPageSize = defaultPageSize
        self.maxPageSize = maxPageSize
        self.registration = registration
        self.maxPatchOperations = maxPatchOperations
    }

    public static let `default` = APILimits()
}

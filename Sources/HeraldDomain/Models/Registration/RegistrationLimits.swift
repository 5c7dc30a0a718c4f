/// Limits applied when a registration or installation is validated. The defaults are
/// generous; an operator can tighten or loosen them per deployment.
public struct RegistrationLimits: Sendable, Hashable {
    /// Tags on one registration (Azure allows 60; Herald's index copes with many more).
    public var maxTags: Int
    /// Size of one template body in UTF-8 bytes.
    public var maxTemplateBodyBytes: Int
    /// Header templates per template.
    public var maxHeaders: Int
    /// Size of one header value or expiry template in UTF-8 bytes.
    public var maxHeaderValueBytes: Int
    /// All header templates of one template together, counted as HTTP/2 counts a header
    /// list (name + value + 32 bytes each): the block must fit every push service's limit.
    public var maxHeaderBlockBytes: Int
    /// Templates per installation.
    public var maxInstallationTemplates: Int
    /// Size of a whole registration or installation document in bytes.
    public var maxDocumentBytes: Int
    /// Limits for compiling template bodies, headers and expiries.
    public var templateLimits: TemplateLimits
    /// Each platform's payload limit: a template body whose fixed text alone passes it can
    /// never render and is refused.
    public var payloadLimits: PayloadLimits
    /// Unclipped expressions (`$(p)`, `%(p)`, `#(p)`) in one body. Each copies a whole property
    /// value, so this bounds how much one value is multiplied; the fan-out refuses any
    /// rendition over the payload limit anyway, this refuses the templates built to pass it.
    public var maxUnboundedSubstitutions: Int

    public init(
        maxTags: Int = 1_000, maxTemplateBodyBytes: Int = 65_536, maxHeaders: Int = 32,
        maxHeaderValueBytes: Int = 4_096, maxHeaderBlockBytes: Int = HeaderFieldRules.maxBlockBytes / 2, maxInstallationTemplates: Int = 64,
        maxDocumentBytes: Int = RecordSizes.maxDocumentBytes, templateLimits: TemplateLimits = .default,
        payloadLimits: PayloadLimits = .default, maxUnboundedSubstitutions: Int = 32
    ) {
        self.payloadLimits = payloadLimits
        self.maxUnboundedSubstitutions = maxUnboundedSubstitutions
        self.maxTags = maxTags
        self.maxTemplateBodyBytes = maxTemplateBodyBytes
        self.maxHeaders = maxHeaders
        self.maxHeaderValueBytes = maxHeaderValueBytes
        self.maxHeaderBlockBytes = maxHeaderBlockBytes
        self.maxInstallationTemplates = maxInstallationTemplates
        self.maxDocumentBytes = maxDocumentBytes
        self.templateLimits = templateLimits
    }

    public static let `default` = RegistrationLimits()
}

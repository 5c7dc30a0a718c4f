import Foundation
import HeraldDomain
import Synchronization

/// A hub's registration limits (`HubLimits`), checked before a write that may add
/// registrations: tags per registration (400), registrations of the hub and of one handle,
/// distinct templates (403 `quota_exceeded`, Azure's answer for a quota). The default hub's come
/// from the deployment's settings (`HERALD_DEFAULT_HUB_LIMITS`).
///
/// The hub's count is read at most every `freshness` and raised by what this process admits
/// meanwhile, so a flood is held near the limit without counting on every write; writes through
/// several API processes may pass it by what each admits within that time. A handle's count
/// is read on every write that adds registrations of it (one pipelined count over the slots),
/// and only for hubs that set `maxRegistrationsPerHandle`.
final class RegistrationQuotas: Sendable {
    let hubs: any HubStore
    let counts: (any RegistrationCounting)?
    /// The `maxRegistrations` of a hub whose limits set none.
    let defaultMaxRegistrations: Int?
    /// The default hub's limits.
    let defaultHubLimits: HubLimits
    let freshness: Duration
    private let cached = Mutex<[HubName: (count: Int, readAt: ContinuousClock.Instant)]>([:])

    init(
        hubs: any HubStore, counts: (any RegistrationCounting)?, defaultMaxRegistrations: Int? = nil,
        defaultHubLimits: HubLimits = HubLimits(), freshness: Duration = .seconds(10)
    ) {
        self.defaultHubLimits = defaultHubLimits
        self.hubs = hubs
        self.counts = counts
        self.defaultMaxRegistrations = defaultMaxRegistrations
        self.freshness = freshness
    }

    /// Checks a write of `hub` that leaves `written` where `replaced()` were (the records of the
    /// same ids before it; empty for a new registration or installation), which is read only
    /// when a count is needed.
    func admit(
        hub: HubName, writing written: [Registration], replacing replaced: () async throws -> [Registration]
    ) async throws {
        var limits: HubLimits
        var limitSource = hub.isDefault ? "its maxRegistrations (HERALD_DEFAULT_HUB_LIMITS)" : "its maxRegistrations"
        if hub.isDefault {
            limits = defaultHubLimits
        } else {
            do {
                guard let definition = try await hubs.hub(hub) else { return }
                limits = definition.limits
            } catch {
                throw APIError.unavailable("the hubs cannot be read; retry later")
            }
        }
        // The deployment's limit is for the hubs it makes; the default hub has its own setting.
        if !hub.isDefault, limits.maxRegistrations == nil, let defaultMaxRegistrations {
            limits.maxRegistrations = defaultMaxRegistrations
            limitSource = "the deployment's limit for hubs that set none (HERALD_HUB_MAX_REGISTRATIONS)"
        }
        if let maxTags = limits.maxTagsPerRegistration, let crowded = written.first(where: { $0.tags.count > maxTags }) {
            throw APIError.validation(
                ValidationFailure(issues: [
                    ValidationIssue(
                        field: "tags", code: ValidationIssue.Code.tooManyTags,
                        message: "\(crowded.tags.count) tags; hub \"\(hub)\" allows \(maxTags) (its maxTagsPerRegistration)")
                ]))
        }
        guard limits.countsRegistrations || limits.maxTemplates != nil else { return }
        guard let counts else { throw APIError.unavailable("the registrations of hub \"\(hub)\" cannot be counted; retry later") }
        let replaced = limits.countsRegistrations ? try await replaced() : []
        do {
            if let maxPerHandle = limits.maxRegistrationsPerHandle {
                let added = Dictionary(written.map { ($0.handle, 1) }, uniquingKeysWith: +)
                    .merging(replaced.map { ($0.handle, -1) }, uniquingKeysWith: +)
                for (handle, more) in added.sorted(by: { $0.key < $1.key }) where more > 0 {
                    let held = try await counts.registrations(hub: hub, handle: handle)
                    guard held + more <= maxPerHandle else {
                        throw Self.exceeded(
                            "hub \"\(hub)\" holds \(held) registrations of this handle; its maxRegistrationsPerHandle is \(maxPerHandle)")
                    }
                }
            }
            let more = written.count - replaced.count
            if let maxRegistrations = limits.maxRegistrations, more > 0 {
                let held = try await count(hub)
                guard held + more <= maxRegistrations else {
                    throw Self.exceeded("hub \"\(hub)\" holds \(held) registrations; \(limitSource) is \(maxRegistrations)")
                }
                cached.withLock { $0[hub]?.count += more }
            }
            // Last, so a write refused for another reason records no template.
            if let maxTemplates = limits.maxTemplates, written.contains(where: { $0.template != nil }) {
                let (admitted, held) = try await counts.admitTemplates(of: written, hub: hub, limit: maxTemplates)
                guard admitted else {
                    throw Self.exceeded(
                        "hub \"\(hub)\" has had \(held) distinct templates; its maxTemplates is \(maxTemplates)",
                        remedy: "use one of its templates or raise the limit")
                }
            }
        } catch let error as APIError {
            throw error
        } catch {
            throw APIError.unavailable("the registrations of hub \"\(hub)\" cannot be counted; retry later")
        }
    }

    private func count(_ hub: HubName) async throws -> Int {
        let now = ContinuousClock.now
        if let known = cached.withLock({ $0[hub] }), now - known.readAt < freshness { return known.count }
        let read = try await counts!.registrations(hub: hub)
        cached.withLock { $0[hub] = (read, now) }
        return read
    }

    static func exceeded(_ message: String, remedy: String = "delete registrations or raise the hub's limit") -> APIError {
        APIError.forbidden("quota_exceeded", message + "; " + remedy)
    }
}

// libFuzzer entry point for the event decoder (what the planner and `POST /v1/notifications`
// read from untrusted publishers). Built by scripts/fuzz; never part of a SwiftPM build.
//
// Every input is decoded with the default limits and with tight ones. The fuzzer checks that
// decoding never crashes or hangs, that a refusal lists at least one issue with a code and a
// message, that an accepted event is within the limits it was decoded with (size, property
// count, collapse id) and has a valid id when it has one, and that an event accepted under
// tight limits is also accepted under the defaults.

import HeraldDomain

private let tightLimits = EventLimits(maxBytes: 512, maxProperties: 4, maxCollapseIdBytes: 8)

@_cdecl("LLVMFuzzerTestOneInput")
public func eventFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = fuzzBytes(data, size)
    let strict = check(bytes, limits: tightLimits)
    let loose = check(bytes, limits: .default)
    if strict { fuzzRequire(loose, "accepted under tight limits but refused under the defaults") }
    return 0
}

/// True when the event was accepted.
private func check(_ bytes: [UInt8], limits: EventLimits) -> Bool {
    do {
        let event = try NotificationEvent.decode(bytes, limits: limits)
        if fuzzVerbose { fuzzTrace("accepted: id \(event.id ?? "-"), \(event.properties.count) properties") }
        fuzzRequire(bytes.count <= limits.maxBytes, "accepted \(bytes.count) bytes over the limit \(limits.maxBytes)")
        fuzzRequire(event.properties.count <= limits.maxProperties, "accepted \(event.properties.count) properties")
        if let collapseId = event.collapseId {
            fuzzRequire(collapseId.utf8.count <= limits.maxCollapseIdBytes, "accepted a collapse id of \(collapseId.utf8.count) bytes")
        }
        if let id = event.id {
            fuzzRequire(IdentifierRules.eventIdProblem(id) == nil, "accepted an invalid id \(id)")
        }
        return true
    } catch {
        if fuzzVerbose { fuzzTrace("refused: \(error)") }
        fuzzRequire(!error.issues.isEmpty, "a refusal without issues")
        for issue in error.issues {
            fuzzRequire(!issue.code.isEmpty && !issue.message.isEmpty, "an issue without code or message: \(issue)")
        }
        return false
    }
}

// libFuzzer entry point for bounded rendering: a template registered by anyone with a Listen
// key, rendered with event properties chosen by anyone with a Send key, must never produce
// (or build in memory) more than its platform's payload limit. Built by scripts/fuzz; never
// part of a SwiftPM build.
//
// Each input is compiled as a JSON and a text template and rendered with every referenced
// property set to a long hostile value, under a 4,096-byte limit. The fuzzer checks that a
// refused rendition stopped within one value of the limit, and that an accepted one is within
// the limit and equal to the unbounded rendition.
//
// With HERALD_FUZZ_UNBOUNDED=1 it renders without the bound instead and requires the output to
// stay within 64 times the limit: that is the check the unbounded renderer fails, and the
// fuzzer finds a template that amplifies a value past it within seconds.

import HeraldDomain

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

private let unbounded = getenv("HERALD_FUZZ_UNBOUNDED") != nil
private let limit = 4_096
private let value = String(repeating: "\"<&\\é", count: 400)  // 2,400 bytes, up to 6x when escaped

@_cdecl("LLVMFuzzerTestOneInput")
public func renderBoundFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let body = String(decoding: fuzzBytes(data, size), as: UTF8.self)
    for format in [TemplateFormat.json, .text] {
        guard let template = try? CompiledTemplate.compile(body, format: format) else { continue }
        var values: [String: String] = [:]
        for name in template.referencedProperties { values[name] = value }
        let properties = TemplateProperties(values)
        if unbounded {
            let rendition = template.render(properties)
            fuzzRequire(rendition.utf8.count <= 64 * limit, "a \(size)-byte template rendered \(rendition.utf8.count) bytes")
            continue
        }
        var buffer: [UInt8] = []
        if template.render(properties, into: &buffer, limit: limit) {
            fuzzRequire(buffer.count <= limit, "an accepted rendition of \(buffer.count) bytes")
            fuzzRequire(buffer == Array(template.render(properties).utf8), "the bounded rendition differs from the unbounded one")
        } else {
            fuzzRequire(buffer.count <= limit + 6 * value.utf8.count, "a refused rendition built \(buffer.count) bytes")
        }
    }
    return 0
}

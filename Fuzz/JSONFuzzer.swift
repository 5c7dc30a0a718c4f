// libFuzzer entry point for Herald's order-preserving JSON reader and writer, which read every
// event, registration, patch and dead letter. Built by scripts/fuzz; never part of a SwiftPM build.
//
// For every input the fuzzer checks: parsing never crashes or hangs; what parses is accepted
// by an independent strict checker (StrictJSONChecker) once written back; writing is stable
// (parse(write(v)) == v, and writing that again gives the same bytes); and every input the
// strict checker accepts within the depth limit also parses, except escaped lone surrogates,
// which the reader refuses by design.

import HeraldDomain

@_cdecl("LLVMFuzzerTestOneInput")
public func jsonFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = fuzzBytes(data, size)
    let value: JSONValue
    do {
        value = try JSONValue.parse(bytes, maximumDepth: 64)
    } catch {
        if fuzzVerbose { fuzzTrace("refused: \(error)") }
        fuzzRequire(!error.description.isEmpty, "a syntax error without a description")
        // Deep input may be refused by the depth limit, and an escaped lone surrogate (valid
        // JSON syntax, but no Unicode text) is refused on purpose: Swift strings cannot hold it.
        // Anything else the strict checker accepts must parse.
        let loneSurrogate = error.code == "invalid_string" && error.message.contains("surrogate")
        if !loneSurrogate, let text = String(validating: bytes, as: UTF8.self), StrictJSONChecker.problem(in: text) == nil,
            maximumNesting(bytes) < 60
        {
            fuzzFail("the strict checker accepts what the reader refuses: \(error)")
        }
        return 0
    }
    var written: [UInt8] = []
    value.write(into: &written)
    let text = String(decoding: written, as: UTF8.self)
    if let problem = StrictJSONChecker.problem(in: text) { fuzzFail("written JSON is invalid: \(problem): \(text.prefix(200))") }
    guard let again = try? JSONValue.parse(written, maximumDepth: 65) else { fuzzFail("written JSON does not parse again") }
    fuzzRequire(again == value, "parse(write(v)) differs from v")
    var rewritten: [UInt8] = []
    again.write(into: &rewritten)
    fuzzRequire(rewritten == written, "writing is not stable")
    return 0
}

/// The deepest nesting of brackets outside strings (an upper bound of the value's depth).
private func maximumNesting(_ bytes: [UInt8]) -> Int {
    var depth = 0
    var deepest = 0
    var inString = false
    var escaped = false
    for byte in bytes {
        if inString {
            if escaped { escaped = false } else if byte == 0x5C { escaped = true } else if byte == 0x22 { inString = false }
            continue
        }
        switch byte {
        case 0x22: inString = true
        case 0x5B, 0x7B:
            depth += 1
            deepest = max(deepest, depth)
        case 0x5D, 0x7D: depth -= 1
        default: break
        }
    }
    return deepest
}

// libFuzzer entry point for the two token readers the API runs on every request before any
// key is tried: the SharedAccessSignature parameter parser and the JWT header reader. Built by
// scripts/fuzz from Sources/HeraldAPI/Access (pure Foundation files); never part of a SwiftPM
// build.
//
// Every input is read as the parameters of a SAS header and as a compact JWT. The fuzzer checks
// that neither crashes or hangs; that a parsed SAS has every field, its resource is its `sr`
// decoded, and that resource encoded again decodes to itself; and that a refusal says why.

import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func accessTokenFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let text = String(decoding: fuzzBytes(data, size), as: UTF8.self)
    do {
        let signature = try SharedAccessSignature.parse(Substring(text))
        if fuzzVerbose { fuzzTrace("parsed: \(signature.resource) \(signature.policyName) \(signature.expiry)") }
        fuzzRequire(!signature.encodedResource.isEmpty && !signature.policyName.isEmpty, "a parsed token without sr or skn")
        fuzzRequire(signature.encodedResource.removingPercentEncoding == signature.resource, "resource is not sr decoded")
        fuzzRequire(
            signature.resource.percentEncodedForSAS.removingPercentEncoding == signature.resource,
            "encoding the resource does not round-trip")
    } catch {
        fuzzRequire(!error.message.isEmpty, "a refusal without a message")
    }
    if let algorithm = JWTHeader.algorithm(of: Substring(text)), fuzzVerbose { fuzzTrace("alg \(algorithm)") }
    return 0
}

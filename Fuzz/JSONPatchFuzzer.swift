// libFuzzer entry point for JSON Patch (RFC 6902 with Azure's installation semantics), which
// `PATCH /v1/installations/{id}` applies to stored documents. Built by scripts/fuzz from
// Sources/HeraldAPI/Patch and HeraldDomain; never part of a SwiftPM build.
//
// An input is a patch and a document separated by the first newline. The fuzzer checks that
// decoding and applying never crash or hang, that a refused patch says which operation and
// why, and that an applied patch yields a document the strict checker accepts; the same
// patch is also applied with the installation rules.

import HeraldDomain

@_cdecl("LLVMFuzzerTestOneInput")
public func jsonPatchFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = fuzzBytes(data, size)
    let split = bytes.firstIndex(of: 0x0A) ?? bytes.endIndex
    guard let patchJSON = try? JSONValue.parse(bytes[..<split]) else { return 0 }
    let documentBytes = split < bytes.endIndex ? Array(bytes[(split + 1)...]) : Array("{}".utf8)
    guard let document = try? JSONValue.parse(documentBytes) else { return 0 }
    let patch: JSONPatch
    do {
        patch = try JSONPatch.decode(patchJSON, maxOperations: 32)
    } catch {
        fuzzRequire(!error.code.isEmpty && !error.message.isEmpty, "a refused patch without code or message")
        return 0
    }
    for result in [
        Result { () throws(JSONPatchError) in try patch.apply(to: document) },
        Result { () throws(JSONPatchError) in try InstallationPatch.apply(patch, to: document) },
    ] {
        switch result {
        case .success(let patched):
            var written: [UInt8] = []
            patched.write(into: &written)
            if let problem = StrictJSONChecker.problem(in: String(decoding: written, as: UTF8.self)) {
                fuzzFail("a patched document is invalid JSON: \(problem)")
            }
        case .failure(let error):
            if fuzzVerbose { fuzzTrace("refused: \(error)") }
            fuzzRequire(!error.code.isEmpty && !error.message.isEmpty, "an apply error without code or message")
        }
    }
    return 0
}

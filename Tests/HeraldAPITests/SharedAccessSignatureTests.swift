import Foundation
import Testing
@testable import HeraldAPI

@Suite("Shared access signatures")
struct SharedAccessSignatureTests {
    /// Computed independently with Python's hmac/base64/urllib (quote with safe=''), the
    /// way Azure's samples build tokens.
    @Test func tokenMatchesAnIndependentlyComputedAzureSignature() {
        let token = SharedAccessSignature.token(
            resource: "http://localhost:8080/v1", policy: "manage", key: "manage-key", expiry: Date(timeIntervalSince1970: 1_700_000_000)
        )
        #expect(
            token
                == "SharedAccessSignature sr=http%3A%2F%2Flocalhost%3A8080%2Fv1&sig=yzxDkWmDCwTNuNmM9XipmWmL2oWoGwhmMKa%2F%2BMXAz0s%3D&se=1700000000&skn=manage"
        )
    }

    @Test func parsesParametersInAnyOrder() throws {
        let signature = try SharedAccessSignature.parse(
            "skn=manage&se=1700000000&sig=yzxDkWmDCwTNuNmM9XipmWmL2oWoGwhmMKa%2F%2BMXAz0s%3D&sr=http%3A%2F%2Flocalhost%3A8080%2Fv1")
        #expect(signature.resource == "http://localhost:8080/v1")
        #expect(signature.encodedResource == "http%3A%2F%2Flocalhost%3A8080%2Fv1")
        #expect(signature.expiry == 1_700_000_000)
        #expect(signature.policyName == "manage")
        #expect(signature.signature.count == 32)
    }

    @Test(arguments: [
        ("sr=a&sig=AAAA&se=1", "skn"),
        ("sr=a&sig=AAAA&skn=p", "se"),
        ("sig=AAAA&se=1&skn=p", "sr"),
        ("sr=a&se=1&skn=p", "sig"),
    ])
    func refusesTokensMissingAParameter(parameters: String, missing: String) {
        #expect {
            _ = try SharedAccessSignature.parse(Substring(parameters))
        } throws: { error in
            (error as? TokenFormatError)?.message.contains("\(missing)=") == true
        }
    }

    @Test(arguments: [
        ("http://localhost:8080", "http://localhost:8080/v1/registrations/r1", true),
        ("http://localhost:8080/", "http://localhost:8080/v1/registrations/r1", true),
        ("HTTP://LOCALHOST:8080/v1", "http://localhost:8080/v1/registrations/r1", true),
        ("http://localhost:8080/v1/registrations/r1", "http://localhost:8080/v1/registrations/r1", true),
        ("http://localhost:8080/v1/registrations/r", "http://localhost:8080/v1/registrations/r1", false),
        ("http://localhost:8080/v1/registrations/r1", "http://localhost:8080/v1/registrations/r2", false),
        ("http://localhost:8080/V1", "http://localhost:8080/v1/registrations", false),
        ("http://other:8080", "http://localhost:8080/v1/registrations", false),
    ])
    func resourceScopeIsAPrefixAtSegmentBoundaries(scope: String, target: String, covers: Bool) {
        #expect(SharedAccessSignature.resource(scope, covers: target) == covers)
    }
}

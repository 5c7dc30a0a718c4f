import HeraldDomain
import Testing
@testable import HeraldAPI

@Suite("JSON Patch (RFC 6902 add, remove, replace)")
struct JSONPatchTests {
    static func apply(_ patch: String, to document: String) throws -> String {
        let patch = try JSONPatch.decode(JSONValue.parse(patch), maxOperations: 100)
        return try patch.apply(to: JSONValue.parse(document)).compactText()
    }

    /// Cases from RFC 6902 appendix A, plus pointer escaping from RFC 6901.
    @Test(arguments: [
        (#"{"foo":"bar"}"#, #"[{"op":"add","path":"/baz","value":"qux"}]"#, #"{"foo":"bar","baz":"qux"}"#),
        (#"{"foo":["bar","baz"]}"#, #"[{"op":"add","path":"/foo/1","value":"qux"}]"#, #"{"foo":["bar","qux","baz"]}"#),
        (#"{"foo":["bar"]}"#, #"[{"op":"add","path":"/foo/-","value":"qux"}]"#, #"{"foo":["bar","qux"]}"#),
        (#"{"baz":"qux","foo":"bar"}"#, #"[{"op":"remove","path":"/baz"}]"#, #"{"foo":"bar"}"#),
        (#"{"foo":["bar","qux","baz"]}"#, #"[{"op":"remove","path":"/foo/1"}]"#, #"{"foo":["bar","baz"]}"#),
        (#"{"baz":"qux","foo":"bar"}"#, #"[{"op":"replace","path":"/baz","value":"boo"}]"#, #"{"baz":"boo","foo":"bar"}"#),
        (
            #"{"foo":{"bar":"baz"}}"#, #"[{"op":"add","path":"/foo/child","value":{"grandchild":{}}}]"#,
            #"{"foo":{"bar":"baz","child":{"grandchild":{}}}}"#
        ),
        (#"{"a/b":1,"m~n":2}"#, #"[{"op":"replace","path":"/a~1b","value":3},{"op":"remove","path":"/m~0n"}]"#, #"{"a/b":3}"#),
        (#"{"x":1}"#, #"[{"op":"replace","path":"","value":[1]}]"#, #"[1]"#),
    ])
    func appliesOperations(document: String, patch: String, expected: String) throws {
        #expect(try Self.apply(patch, to: document) == expected)
    }

    @Test(arguments: [
        (#"[{"op":"replace","path":"/missing","value":1}]"#, JSONPatchError.Code.pathNotFound, "[0].path"),
        (#"[{"op":"remove","path":"/foo/5"}]"#, JSONPatchError.Code.pathNotFound, "[0].path"),
        (#"[{"op":"add","path":"/foo/01","value":1}]"#, JSONPatchError.Code.pathNotFound, "[0].path"),
        (#"[{"op":"add","path":"/nope/x","value":1}]"#, JSONPatchError.Code.pathNotFound, "[0].path"),
        (#"[{"op":"move","from":"/a","path":"/b"}]"#, JSONPatchError.Code.unsupportedOperation, "[0].op"),
        (#"[{"op":"add","path":"/a"}]"#, JSONPatchError.Code.invalidPatch, "[0].value"),
        (#"[{"op":"add","path":"a","value":1}]"#, JSONPatchError.Code.invalidPatch, "[0].path"),
        (#"[{"op":"add","path":"/~2","value":1}]"#, JSONPatchError.Code.invalidPatch, "[0].path"),
        (#"{"op":"add"}"#, JSONPatchError.Code.invalidPatch, ""),
        (#"[{"op":"add","path":"/a","value":1},{"op":"remove","path":"/zzz"}]"#, JSONPatchError.Code.pathNotFound, "[1].path"),
    ])
    func refusesBadPatches(patch: String, code: String, field: String) {
        #expect {
            _ = try Self.apply(patch, to: #"{"foo":["bar"]}"#)
        } throws: { error in
            let error = error as? JSONPatchError
            return error?.code == code && error?.field == field
        }
    }

    @Test func installationPatchUsesAzureTagSemantics() throws {
        let document = try JSONValue.parse(#"{"pushChannel":"x","tags":["World"],"templates":{"en":{"body":"{}","tags":[]}}}"#)
        let patch = try JSONPatch.decode(
            JSONValue.parse(
                """
                [{"op":"add","path":"/tags","value":"Sports"},
                 {"op":"add","path":"/tags","value":["World","Science"]},
                 {"op":"remove","path":"/tags/World"},
                 {"op":"remove","path":"/tags/NotThere"},
                 {"op":"add","path":"/templates/en/tags","value":"lang-en"},
                 {"op":"add","path":"/templates/en/tags/-","value":"lang-en"},
                 {"op":"add","path":"/userId","value":"alice"}]
                """), maxOperations: 100)
        let result = try InstallationPatch.apply(patch, to: document)
        #expect(result["tags"]?.strings == ["Sports", "Science"])
        #expect(result["templates"]?["en"]?["tags"]?.strings == ["lang-en"])
        #expect(result["userId"]?.stringValue == "alice")
    }

    @Test(arguments: ["/installationId", "/platform", "", "/tags/0/x", "/templates/en/name", "/secondaryTiles"])
    func installationPatchRefusesOtherPaths(path: String) throws {
        let patch = try JSONPatch.decode(JSONValue.parse(#"[{"op":"replace","path":"\#(path)","value":"x"}]"#), maxOperations: 10)
        #expect {
            _ = try InstallationPatch.apply(
                patch, to: JSONValue.parse(#"{"installationId":"i","platform":"apns","tags":[],"templates":{"en":{"body":"{}"}}}"#))
        } throws: { error in
            (error as? JSONPatchError)?.code == JSONPatchError.Code.pathNotAllowed && (error as? JSONPatchError)?.field == "[0].path"
        }
    }
}

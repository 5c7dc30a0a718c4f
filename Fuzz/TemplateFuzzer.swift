// libFuzzer entry point for the template compiler. Built by scripts/fuzz against the
// HeraldDomain library with -sanitize=fuzzer,address; never part of a SwiftPM build.
//
// Each input is compiled as a JSON, an XML and a text template. Every compiled template is
// rendered with no properties, with harmless values, with hostile strings (quotes,
// backslashes, control characters, markup, emoji, lone combining marks, U+FFFE) and with
// number-like strings, and the fuzzer checks:
// - JSON: every rendering is valid JSON (StrictJSONChecker, independent of the compiler);
// - XML: if the harmless rendering is well-formed, every rendering is (XMLWellFormednessChecker);
// - text: values never add control characters, so a header line cannot be split;
// - rendering is deterministic, `render(_:into:)` appends what `render(_:)` returns, and a
//   constant template renders the same whatever the properties;
// - errors carry a position inside the body and a message;
// - a template that compiles under tight limits also compiles under the defaults.
// A violated property calls `fatalError`, which libFuzzer records as a crash with the input.

import HeraldDomain

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `HERALD_FUZZ_VERBOSE=1` prints what each input compiled to, for reading a reproducer.
private let verbose = getenv("HERALD_FUZZ_VERBOSE") != nil

@_cdecl("LLVMFuzzerTestOneInput")
public func templateFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    let body = String(decoding: bytes, as: UTF8.self)
    for format in TemplateFormat.allCases {
        TemplateFuzzCase(body: body, format: format).run()
    }
    _ = CompiledTemplate.detectFormat(body)
    return 0
}

private struct TemplateFuzzCase {
    let body: String
    let format: TemplateFormat

    private static let tightLimits = TemplateLimits(
        maxBodyBytes: 256, maxPropertyNameLength: 8, maxClipLength: 16, maxExpressions: 4, maxNestingDepth: 3)

    private static let hostileValues: [String] = [
        "\"quoted\" \\back\\slash\\",
        "\u{0}\u{1}\u{8}\u{B}\u{C}\u{1F}\u{7F} line\nbreak\r\ttab",
        "<b attr=\"x\">&amp; &lt; &#0; &bogus;</b>]]><!-- -->",
        "👨‍👩‍👧‍👦🇯🇵 e\u{301}\u{301} \u{2028}\u{2029}",
        "\u{FFFE}\u{FFFF}\u{FEFF}\u{D7FF}\u{E000}",
        "$(other) #(x) {'a' + b} %(y) .(z, 3)",
        "'\"''\"\"}{)(",
        "\\u0000\\\"",
        String(repeating: "é", count: 300),
        "",
    ]

    private static let numberLikeValues: [String] = [
        "42", "-3.5e+2", "0", "-0", "01", "-", "1.", ".5", "1e", "1e+", "+1", " 1", "1 ",
        "true", "false", "TRUE", "null", "NaN", "Infinity", "0x10", "١٢", "1_000", "9" + String(repeating: "9", count: 400),
    ]

    func run() {
        let template: CompiledTemplate
        do {
            template = try CompiledTemplate.compile(body, format: format)
        } catch {
            if verbose { trace("\(format): error[\(error.code)] \(error)") }
            check(error)
            if (try? CompiledTemplate.compile(body, format: format, limits: Self.tightLimits)) != nil {
                fail("compiles under tight limits but not under the defaults: \(error)")
            }
            return
        }
        _ = try? CompiledTemplate.compile(body, format: format, limits: Self.tightLimits)
        if verbose { trace("\(format): compiled, properties \(template.referencedProperties.sorted())") }
        require(template.source == body, "source not kept")
        let names = template.referencedProperties.sorted()

        let harmless = Dictionary(uniqueKeysWithValues: names.map { ($0, "x") })
        let harmlessOutput = render(template, harmless)
        var renderings: [(label: String, output: String)] = [("no properties", render(template, [:]))]
        for rotation in 0..<2 {
            renderings.append(("hostile \(rotation)", render(template, Self.assign(Self.hostileValues, to: names, rotation: rotation))))
            renderings.append(
                ("number-like \(rotation)", render(template, Self.assign(Self.numberLikeValues, to: names, rotation: rotation))))
        }
        // Keys in other cases must be found too (names are case-insensitive).
        let upper = Dictionary(uniqueKeysWithValues: names.map { ($0.uppercased(), "<&\"'>") })
        renderings.append(("upper-case keys", render(template, upper)))
        if verbose {
            for (label, output) in [("harmless", harmlessOutput)] + renderings { trace("  \(label): \(output.debugDescription)") }
        }
        if template.isConstant {
            // Constant means "ignores the properties"; it need not equal the source, since a
            // composite of literals such as {'alert'} renders to `alert`.
            for (label, output) in renderings {
                require(
                    output == harmlessOutput,
                    "constant \(format) template renders differently with \(label) values: \(output.debugDescription)")
            }
        }

        switch format {
        case .json:
            for (label, output) in [("harmless", harmlessOutput)] + renderings {
                if let problem = StrictJSONChecker.problem(in: output) {
                    fail("JSON template rendered invalid JSON with \(label) values: \(problem)\noutput: \(output.debugDescription)")
                }
            }
        case .xml:
            // Only as strict as the simple checker: compare against the harmless rendering.
            guard XMLWellFormednessChecker.problem(in: harmlessOutput) == nil else { return }
            for (label, output) in renderings {
                if let problem = XMLWellFormednessChecker.problem(in: output) {
                    fail("XML template rendered ill-formed XML with \(label) values: \(problem)\noutput: \(output.debugDescription)")
                }
            }
        case .text:
            let baseline = Self.controlCharacterCount(harmlessOutput)
            for (label, output) in renderings where label != "no properties" {
                let count = Self.controlCharacterCount(output)
                require(
                    count == baseline,
                    "text template output has \(count) control characters with \(label) values, \(baseline) with harmless ones: \(output.debugDescription)"
                )
            }
        }
    }

    private func render(_ template: CompiledTemplate, _ values: [String: String]) -> String {
        let properties = TemplateProperties(values)
        let output = template.render(properties)
        require(template.render(properties) == output, "rendering is not deterministic")
        var buffer: [UInt8] = [0x2A]
        template.render(properties, into: &buffer)
        require(buffer.first == 0x2A && buffer.dropFirst().elementsEqual(output.utf8), "render(into:) differs from render()")
        return output
    }

    private func check(_ error: TemplateError) {
        let byteCount = body.utf8.count
        require(error.line >= 1 && error.column >= 1, "position line \(error.line) column \(error.column) for \(error.code)")
        require(
            (0...byteCount).contains(error.offset) || error.code == .tooLarge,
            "offset \(error.offset) outside 0...\(byteCount) for \(error.code)")
        require(!error.message.isEmpty, "empty message for \(error.code)")
        require(!error.code.rawValue.isEmpty, "empty code")
        _ = error.description
    }

    private static func assign(_ values: [String], to names: [String], rotation: Int) -> [String: String] {
        var assigned: [String: String] = [:]
        for (index, name) in names.enumerated() {
            assigned[name] = values[(index + rotation) % values.count]
        }
        return assigned
    }

    private static func controlCharacterCount(_ text: String) -> Int {
        text.utf8.reduce(0) { $0 + ($1 < 0x20 || $1 == 0x7F ? 1 : 0) }
    }
}

private func require(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
    if !condition() { fail(message()) }
}

private func fail(_ message: String) -> Never {
    fatalError("template fuzz property violated: \(message)")
}

/// Written to stderr unbuffered, so the trace survives the crash it is meant to explain.
private func trace(_ message: String) {
    var line = message + "\n"
    line.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
}

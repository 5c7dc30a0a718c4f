extension TemplateExpression {
    /// The property's value for this expression: the event's, else that of the first of its
    /// alternatives the event has, else the default, else nil.
    func value(in properties: TemplateProperties) -> String? {
        if let value = properties.value(forFoldedName: property) { return value }
        for alternative in alternatives {
            if let value = properties.value(forFoldedName: alternative) { return value }
        }
        return fallback
    }

    /// The alternative read in place of `property` (nil when the event has `property`, or none
    /// of them).
    func alternativeUsed(in properties: TemplateProperties) -> String? {
        guard !alternatives.isEmpty, properties.value(forFoldedName: property) == nil else { return nil }
        return alternatives.first { properties.value(forFoldedName: $0) != nil }
    }

    /// Appends the expression's output for `value` (from ``value(in:)``).
    func render(value: String?, escaping: TemplateEscaping, into buffer: inout [UInt8]) {
        guard let value else {
            // A missing property is "", which for a whole JSON value means the empty string.
            if operation == .number && escaping == .jsonString { buffer.append(contentsOf: Self.emptyString) }
            return
        }
        switch operation {
        case .value:
            escaping.append(value, into: &buffer)
        case .clip(let length):
            escaping.append(Self.clip(value, to: length), into: &buffer)
        case .ellipsis(let length):
            let clipped = Self.clipWithEllipsis(value, to: length)
            escaping.append(clipped.text, into: &buffer)
            if clipped.addEllipsis { buffer.append(contentsOf: Self.ellipsis) }
        case .percentEncode:
            if value.utf8.withContiguousStorageIfAvailable({ TemplateEscaping.appendPercentEncoded($0, into: &buffer) }) == nil {
                var copy = value
                copy.withUTF8 { TemplateEscaping.appendPercentEncoded($0, into: &buffer) }
            }
        case .number:
            if escaping == .jsonString {
                if Self.isJSONNumber(value) {
                    buffer.append(contentsOf: value.utf8)
                } else if let boolean = Self.boolean(value) {
                    buffer.append(contentsOf: boolean ? Self.trueBytes : Self.falseBytes)
                } else {
                    buffer.append(0x22)
                    escaping.append(value, into: &buffer)
                    buffer.append(0x22)
                }
            } else {
                escaping.append(value, into: &buffer)
            }
        }
    }

    /// A lower bound of what `render(value:...)` appends: the raw UTF-8 size of an unclipped value (its
    /// escaped or percent-encoded form is never shorter), 0 for clipped ones.
    func minimumOutputBytes(for value: String?) -> Int {
        switch operation {
        case .value, .percentEncode, .number:
            value?.utf8.count ?? 0
        case .clip, .ellipsis:
            0
        }
    }

    /// The first `length` Characters. A value with no more UTF-8 bytes than `length` cannot
    /// have more Characters, which spares the grapheme walk for most values.
    static func clip(_ value: String, to length: Int) -> Substring {
        if value.utf8.count <= length { return value[...] }
        let end = value.index(value.startIndex, offsetBy: length, limitedBy: value.endIndex) ?? value.endIndex
        return value[..<end]
    }

    /// At most `length` Characters in all: an unclipped value as it is, else its first
    /// `length - 3` Characters followed by "...". Below 3 there is no room for the dots and
    /// the value is simply clipped.
    static func clipWithEllipsis(_ value: String, to length: Int) -> (text: Substring, addEllipsis: Bool) {
        if value.utf8.count <= length { return (value[...], false) }
        guard let end = value.index(value.startIndex, offsetBy: length, limitedBy: value.endIndex),
            end != value.endIndex
        else { return (value[...], false) }
        guard length >= 3 else { return (value[..<end], false) }
        let kept = value.index(value.startIndex, offsetBy: length - 3)
        return (value[..<kept], true)
    }

    /// JSON's number grammar, a leading minus allowed: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`,
    /// and finite as a double: `1e999` matches the grammar, but strict readers (and every push
    /// service) refuse it as a number, so it is written as a string instead.
    static func isJSONNumber(_ value: String) -> Bool {
        guard matchesJSONNumberGrammar(value) else { return false }
        return Double(value)?.isFinite ?? false
    }

    static func matchesJSONNumberGrammar(_ value: String) -> Bool {
        var iterator = value.utf8.makeIterator()
        var byte = iterator.next()
        if byte == TemplateByte.minus { byte = iterator.next() }
        guard let first = byte, TemplateByte.isDigit(first) else { return false }
        byte = iterator.next()
        if first != 0x30 {
            while let digit = byte, TemplateByte.isDigit(digit) { byte = iterator.next() }
        }
        if byte == TemplateByte.dot {
            byte = iterator.next()
            guard let digit = byte, TemplateByte.isDigit(digit) else { return false }
            while let digit = byte, TemplateByte.isDigit(digit) { byte = iterator.next() }
        }
        if byte == 0x65 || byte == 0x45 {
            byte = iterator.next()
            if byte == TemplateByte.plus || byte == TemplateByte.minus { byte = iterator.next() }
            guard let digit = byte, TemplateByte.isDigit(digit) else { return false }
            while let digit = byte, TemplateByte.isDigit(digit) { byte = iterator.next() }
        }
        return byte == nil
    }

    /// `true` or `false` in any ASCII case (a .NET backend sends "True").
    static func boolean(_ value: String) -> Bool? {
        let utf8 = value.utf8
        guard utf8.count == 4 || utf8.count == 5 else { return nil }
        let lowered = utf8.map(TemplateByte.lowercased)
        if lowered.elementsEqual(trueBytes) { return true }
        if lowered.elementsEqual(falseBytes) { return false }
        return nil
    }

    private static let emptyString: [UInt8] = [0x22, 0x22]
    private static let ellipsis: [UInt8] = [0x2E, 0x2E, 0x2E]
    private static let trueBytes: [UInt8] = Array("true".utf8)
    private static let falseBytes: [UInt8] = Array("false".utf8)
}

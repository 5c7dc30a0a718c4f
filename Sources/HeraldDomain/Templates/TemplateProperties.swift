/// The named values of one event that templates read, looked up without regard to ASCII case
/// (`$(news_french)` finds `News_French`, as in Azure Notification Hubs).
///
/// Build it once per event and render every template against it: keys are folded to lower
/// case here, so a lookup while rendering compares already-folded names.
public struct TemplateProperties: Sendable {
    /// Folded keys and values. Events carry a handful of properties, and comparing a few
    /// short strings is cheaper than hashing one, so small sets are searched in order.
    private let entries: [(name: String, value: String)]
    /// For larger sets, folded key to index in `entries`.
    private let index: [String: Int]?

    private static let linearSearchLimit = 12

    /// When two keys differ only in case (`Title` and `title`), the one that sorts first in
    /// code-point order wins, so the choice never depends on dictionary iteration order.
    public init(_ values: [String: String]) {
        var positions = [String: Int](minimumCapacity: values.count)
        var entries: [(name: String, value: String)] = []
        entries.reserveCapacity(values.count)
        var collided = false
        for (key, value) in values {
            let folded = Self.fold(key)
            if positions[folded] != nil {
                collided = true
            } else {
                positions[folded] = entries.count
                entries.append((folded, value))
            }
        }
        if collided {
            positions.removeAll(keepingCapacity: true)
            entries.removeAll(keepingCapacity: true)
            for key in values.keys.sorted() {
                let folded = Self.fold(key)
                guard positions[folded] == nil, let value = values[key] else { continue }
                positions[folded] = entries.count
                entries.append((folded, value))
            }
        }
        self.entries = entries
        self.index = entries.count > Self.linearSearchLimit ? positions : nil
    }

    public subscript(name: String) -> String? {
        value(forFoldedName: Self.fold(name))
    }

    public var count: Int { entries.count }
    public var isEmpty: Bool { entries.isEmpty }

    /// Lookup for names the compiler already folded.
    func value(forFoldedName name: String) -> String? {
        if let index {
            return index[name].map { entries[$0].value }
        }
        for entry in entries where entry.name == name {
            return entry.value
        }
        return nil
    }

    /// ASCII-only lower-casing: property names are ASCII, and full Unicode folding would let
    /// a key such as "\u{212A}ey" (Kelvin sign) match `$(key)`.
    static func fold(_ name: String) -> String {
        guard name.utf8.contains(where: { $0 >= 0x41 && $0 <= 0x5A }) else { return name }
        return String(decoding: name.utf8.map(TemplateByte.lowercased), as: UTF8.self)
    }
}

extension TemplateProperties: ExpressibleByDictionaryLiteral {
    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(Dictionary(elements, uniquingKeysWith: { first, _ in first }))
    }
}

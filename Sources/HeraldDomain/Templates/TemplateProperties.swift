/// The named values of one event that templates read, looked up without regard to ASCII case
/// (`$(news_french)` finds `News_French`, as in Azure Notification Hubs).
///
/// Build it once per event and render every template against it: keys are folded to lower
/// case here so a lookup during rendering costs one hash of the already-folded name.
public struct TemplateProperties: Sendable {
    @usableFromInline
    let storage: [String: String]

    /// When two keys differ only in case (`Title` and `title`), the one that sorts first in
    /// code-point order wins, so the choice never depends on dictionary iteration order.
    public init(_ values: [String: String]) {
        var storage = [String: String](minimumCapacity: values.count)
        var collided = false
        for (key, value) in values where storage.updateValue(value, forKey: Self.fold(key)) != nil {
            collided = true
        }
        if collided {
            storage.removeAll(keepingCapacity: true)
            for key in values.keys.sorted() {
                let folded = Self.fold(key)
                if storage[folded] == nil { storage[folded] = values[key] }
            }
        }
        self.storage = storage
    }

    public subscript(name: String) -> String? {
        storage[Self.fold(name)]
    }

    public var count: Int { storage.count }
    public var isEmpty: Bool { storage.isEmpty }

    /// Lookup for names the compiler already folded.
    @inlinable
    func value(forFoldedName name: String) -> String? {
        storage[name]
    }

    /// ASCII-only lower-casing: property names are ASCII, and full Unicode folding would let
    /// a key such as "\u{212A}ey" (Kelvin sign) match `$(key)`.
    static func fold(_ name: String) -> String {
        guard name.utf8.contains(where: { $0 >= 0x41 && $0 <= 0x5A }) else { return name }
        return String(decoding: name.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }, as: UTF8.self)
    }
}

extension TemplateProperties: ExpressibleByDictionaryLiteral {
    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(Dictionary(elements, uniquingKeysWith: { first, _ in first }))
    }
}

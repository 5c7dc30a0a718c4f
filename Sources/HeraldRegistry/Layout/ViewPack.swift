import Foundation

/// A pack of fan-out views: the value of one field of a slot's `packs` hash, holding the
/// registrations at positions `field * SlotLayout.positionsPerPack` up to the next pack's.
///
/// Entries follow each other with nothing in between, each
/// `[position: 4 bytes big-endian][id length: 4 bytes][view length: 4 bytes][id][view]`.
/// The order is the order of changes (a changed registration moves to the end), so two packs
/// holding the same registrations may differ in order; `entries(_:)` compares them as sets.
///
/// A broadcast reads a slot a few hundred packs at a time instead of one hash field per
/// registration, which is what makes reading a slot cheap for Redis and for the reader
/// (docs/redis-layout.md).
public enum ViewPack {
    /// Bytes before an entry's id.
    public static let headerSize = 12

    /// Appends the entry of `id` at `position` with `view` to `pack`.
    public static func append<ID: Collection, View: Collection>(position: Int, id: ID, view: View, to pack: inout [UInt8])
    where ID.Element == UInt8, View.Element == UInt8 {
        appendLength(position, to: &pack)
        appendLength(id.count, to: &pack)
        appendLength(view.count, to: &pack)
        pack.append(contentsOf: id)
        pack.append(contentsOf: view)
    }

    /// A pack holding `entries` in the given order.
    public static func encode(_ entries: [(position: Int, id: String, view: String)]) -> [UInt8] {
        var pack: [UInt8] = []
        for entry in entries { append(position: entry.position, id: entry.id.utf8, view: entry.view.utf8, to: &pack) }
        return pack
    }

    /// Calls `body` with the position, id and view of each entry, in place, in order. Returns
    /// false when the pack ends in bytes that are not a whole entry (those are not passed to
    /// `body`).
    @discardableResult
    public static func forEachEntry(
        in pack: UnsafeRawBufferPointer,
        _ body: (_ position: Int, _ id: UnsafeRawBufferPointer, _ view: UnsafeRawBufferPointer) throws -> Void
    ) rethrows -> Bool {
        var offset = 0
        let end = pack.count
        while offset < end {
            guard let entry = entry(at: offset, in: pack) else { return false }
            try body(
                entry.position, UnsafeRawBufferPointer(rebasing: pack[entry.id]), UnsafeRawBufferPointer(rebasing: pack[entry.view])
            )
            offset = entry.view.upperBound
        }
        return true
    }

    /// The view of `id` in `pack`, in place; nil when the pack has no entry for it (or the
    /// entry would lie past a malformed part).
    public static func view(of id: UnsafeRawBufferPointer, in pack: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        var offset = 0
        let end = pack.count
        while offset < end {
            guard let entry = entry(at: offset, in: pack) else { return nil }
            if entry.id.count == id.count,
                id.count == 0 || memcmp(pack.baseAddress! + entry.id.lowerBound, id.baseAddress!, id.count) == 0
            {
                return UnsafeRawBufferPointer(rebasing: pack[entry.view])
            }
            offset = entry.view.upperBound
        }
        return nil
    }

    /// The entries of `pack` as (position, id, view) sorted by id, or nil when it is
    /// malformed: the form in which two packs with the same registrations compare equal.
    public static func entries(_ pack: [UInt8]) -> [(position: Int, id: String, view: String)]? {
        var entries: [(position: Int, id: String, view: String)] = []
        let whole = pack.withUnsafeBytes { bytes in
            forEachEntry(in: bytes) { position, id, view in
                entries.append((position, String(decoding: id, as: UTF8.self), String(decoding: view, as: UTF8.self)))
            }
        }
        guard whole else { return nil }
        return entries.sorted { $0.id.utf8.lexicographicallyPrecedes($1.id.utf8) }
    }

    // MARK: Bytes

    private static func entry(at offset: Int, in pack: UnsafeRawBufferPointer) -> (position: Int, id: Range<Int>, view: Range<Int>)? {
        guard pack.count - offset >= headerSize else { return nil }
        let position = readLength(pack, at: offset)
        let idLength = readLength(pack, at: offset + 4)
        let viewLength = readLength(pack, at: offset + 8)
        let idStart = offset + headerSize
        guard idLength <= pack.count - idStart, viewLength <= pack.count - idStart - idLength else { return nil }
        let viewStart = idStart + idLength
        return (position, idStart..<viewStart, viewStart..<(viewStart + viewLength))
    }

    private static func readLength(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> Int {
        Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
    }

    private static func appendLength(_ length: Int, to pack: inout [UInt8]) {
        precondition(length >= 0 && length <= Int(UInt32.max), "a view pack entry part must fit in 4 bytes of length")
        pack.append(UInt8(truncatingIfNeeded: length >> 24))
        pack.append(UInt8(truncatingIfNeeded: length >> 16))
        pack.append(UInt8(truncatingIfNeeded: length >> 8))
        pack.append(UInt8(truncatingIfNeeded: length))
    }
}

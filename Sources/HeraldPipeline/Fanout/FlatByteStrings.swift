/// Byte strings stored back to back in one buffer with their end offsets: a page of a
/// thousand set members costs two growing arrays that are reused from page to page, instead
/// of an array per member.
struct FlatByteStrings {
    private var bytes: [UInt8] = []
    private var ends: [Int] = []

    var count: Int { ends.count }
    var isEmpty: Bool { ends.isEmpty }
    var indices: Range<Int> { ends.indices }

    /// The bytes of string `index`, sharing this storage.
    subscript(index: Int) -> ArraySlice<UInt8> {
        bytes[start(of: index)..<ends[index]]
    }

    mutating func append(_ string: UnsafeRawBufferPointer) {
        bytes.append(contentsOf: string)
        ends.append(bytes.count)
    }

    mutating func removeAll(keepingCapacity: Bool) {
        bytes.removeAll(keepingCapacity: keepingCapacity)
        ends.removeAll(keepingCapacity: keepingCapacity)
    }

    /// Calls `body` with string `index` as raw bytes, valid only inside `body`.
    func withBytes<T>(at index: Int, _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        let range = start(of: index)..<ends[index]
        return try bytes.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[range])) }
    }

    private func start(of index: Int) -> Int {
        index == 0 ? 0 : ends[index - 1]
    }
}

extension UInt64 {
    /// Parses ASCII decimal digits (a Redis cursor); nil for anything else or an overflow.
    init?(decimal bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return nil }
        var value: UInt64 = 0
        for byte in bytes {
            let digit = byte &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(UInt64(digit))
            guard !overflow1 && !overflow2 else { return nil }
            value = sum
        }
        self = value
    }
}

import Foundation

/// A tag expression compiled for testing one registration at a time against the tags its
/// fan-out view carries (`World,Politics,$UserId:{alice}`): what the fan-out's scan plan runs
/// once per registration of a slot, so up to `truthTableTags` tags it allocates nothing per
/// call.
///
/// The expression's distinct tags are numbered; a registration's tags are turned into the set
/// of those numbers it holds, and that set is looked up in a truth table (up to
/// `truthTableTags` distinct tags) or run through the expression in postfix form.
public struct TagMatcher: Sendable {
    /// Up to this many distinct tags the answer for every combination is computed up front.
    public static let truthTableTags = 12

    /// The expression's distinct tags, in order of first appearance.
    public let tags: [String]
    /// The tags' bytes one after the other; tag `n` is `flat[starts[n]..<starts[n + 1]]`.
    private let flat: [UInt8]
    private let starts: [Int]
    private let program: [Operation]
    /// Bit `mask` says whether a registration holding exactly the tags in `mask` matches.
    private let truthTable: [UInt64]?

    enum Operation: Sendable, Hashable {
        case tag(Int)
        case not
        case and(Int)
        case or(Int)
    }

    public init(_ expression: TagExpression) {
        var tags: [String] = []
        var numbers: [String: Int] = [:]
        var program: [Operation] = []
        func compile(_ node: TagExpression) {
            switch node {
            case .tag(let tag):
                let number: Int
                if let known = numbers[tag] {
                    number = known
                } else {
                    number = tags.count
                    numbers[tag] = number
                    tags.append(tag)
                }
                program.append(.tag(number))
            case .not(let operand):
                compile(operand)
                program.append(.not)
            case .and(let operands):
                operands.forEach(compile)
                program.append(.and(operands.count))
            case .or(let operands):
                operands.forEach(compile)
                program.append(.or(operands.count))
            }
        }
        compile(expression)
        self.tags = tags
        var flat: [UInt8] = []
        var starts = [0]
        for tag in tags {
            flat.append(contentsOf: tag.utf8)
            starts.append(flat.count)
        }
        self.flat = flat
        self.starts = starts
        self.program = program
        if tags.count <= Self.truthTableTags {
            let combinations = 1 << tags.count
            var table = [UInt64](repeating: 0, count: (combinations + 63) / 64)
            var held = [UInt64](repeating: 0, count: 1)
            for mask in 0..<combinations {
                held[0] = UInt64(mask)
                if Self.run(program, held: held) { table[mask >> 6] |= 1 << UInt64(mask & 63) }
            }
            truthTable = table
        } else {
            truthTable = nil
        }
    }

    /// Whether a registration carrying `tags` matches.
    public func matches<Tags: Sequence>(_ tags: Tags) -> Bool where Tags.Element == String {
        var list: [UInt8] = []
        for tag in tags {
            if !list.isEmpty { list.append(UInt8(ascii: ",")) }
            list.append(contentsOf: tag.utf8)
        }
        return list.withUnsafeBytes { matches(tagList: $0) }
    }

    /// Whether a registration whose tags are `tagList`, joined by `,` (no tag contains one,
    /// `TagRules`), matches.
    public func matches(tagList: UnsafeRawBufferPointer) -> Bool {
        if let truthTable {
            let mask = tagList.isEmpty ? 0 : heldMask(tagList)
            return truthTable[mask >> 6] & (1 << UInt64(mask & 63)) != 0
        }
        var held = [UInt64](repeating: 0, count: (tags.count + 63) / 64)
        if !tagList.isEmpty {
            forEachHeld(tagList) { held[$0 >> 6] |= 1 << UInt64($0 & 63) }
        }
        return Self.run(program, held: held)
    }

    /// The registrations that match, 64 at a time: `tagWords[n]` is the bitmap of the
    /// registrations holding `tags[n]` (missing words are zero), `live` the bitmap of every
    /// registration there is; bit `b` of a word stands for the same registration in every
    /// bitmap. A negation selects only live registrations, so the result never holds a bit
    /// `live` does not. Returns as many words as `live` has.
    public func matchingWords(live: [UInt64], tagWords: [[UInt64]]) -> [UInt64] {
        precondition(tagWords.count == tags.count, "one bitmap per tag of the expression")
        var result = [UInt64](repeating: 0, count: live.count)
        var stack: [UInt64] = []
        stack.reserveCapacity(program.count)
        for word in live.indices {
            let alive = live[word]
            guard alive != 0 else { continue }
            stack.removeAll(keepingCapacity: true)
            for operation in program {
                switch operation {
                case .tag(let number):
                    let bits = tagWords[number]
                    stack.append(word < bits.count ? bits[word] & alive : 0)
                case .not:
                    stack[stack.count - 1] = ~stack[stack.count - 1] & alive
                case .and(let count):
                    var all = alive
                    for value in stack.suffix(count) { all &= value }
                    stack.removeLast(count)
                    stack.append(all)
                case .or(let count):
                    var any: UInt64 = 0
                    for value in stack.suffix(count) { any |= value }
                    stack.removeLast(count)
                    stack.append(any)
                }
            }
            result[word] = stack.last ?? 0
        }
        return result
    }

    private func heldMask(_ tagList: UnsafeRawBufferPointer) -> Int {
        var mask = 0
        forEachHeld(tagList) { mask |= 1 << $0 }
        return mask
    }

    /// Calls `body` with the number of every expression tag found in `tagList`.
    @inline(__always)
    private func forEachHeld(_ tagList: UnsafeRawBufferPointer, _ body: (Int) -> Void) {
        guard let base = tagList.baseAddress else { return }
        let count = tagList.count
        let tagCount = tags.count
        flat.withUnsafeBytes { flat in
            starts.withUnsafeBufferPointer { starts in
                guard let flatBase = flat.baseAddress else { return }
                var start = 0
                while start <= count {
                    let end: Int
                    if let comma = memchr(base + start, Int32(UInt8(ascii: ",")), count - start) {
                        end = base.distance(to: UnsafeRawPointer(comma))
                    } else {
                        end = count
                    }
                    let length = end - start
                    var number = 0
                    while number < tagCount {
                        let tagStart = starts[number]
                        if starts[number + 1] - tagStart == length, memcmp(flatBase + tagStart, base + start, length) == 0 {
                            body(number)
                            break
                        }
                        number += 1
                    }
                    start = end + 1
                }
            }
        }
    }

    private static func run(_ program: [Operation], held: [UInt64]) -> Bool {
        var stack: [Bool] = []
        stack.reserveCapacity(program.count)
        for operation in program {
            switch operation {
            case .tag(let number):
                stack.append(held[number >> 6] & (1 << UInt64(number & 63)) != 0)
            case .not:
                stack[stack.count - 1].toggle()
            case .and(let count):
                let all = stack.suffix(count).allSatisfy { $0 }
                stack.removeLast(count)
                stack.append(all)
            case .or(let count):
                let any = stack.suffix(count).contains(true)
                stack.removeLast(count)
                stack.append(any)
            }
        }
        return stack.last ?? false
    }
}

import Foundation
import HeraldKafka
import Testing

@Suite("glibc malloc thresholds for librdkafka's batch buffers")
struct MallocTuningTests {
    @Test("the operator's own glibc malloc variables are found, and nothing else counts")
    func operatorTuning() {
        #expect(MallocTuning.operatorTuning(in: [:]) == nil)
        #expect(MallocTuning.operatorTuning(in: ["MALLOC_ARENA_MAX": "2", "HERALD_ALLOCATOR": "tuned"]) == nil)
        #expect(MallocTuning.operatorTuning(in: ["MALLOC_TRIM_THRESHOLD_": "131072"]) == "MALLOC_TRIM_THRESHOLD_")
        #expect(MallocTuning.operatorTuning(in: ["MALLOC_MMAP_THRESHOLD_": "0"]) == "MALLOC_MMAP_THRESHOLD_")
        #expect(MallocTuning.operatorTuning(in: ["GLIBC_TUNABLES": "glibc.malloc.trim_threshold=1"]) == "GLIBC_TUNABLES")
        #expect(MallocTuning.operatorTuning(in: ["GLIBC_TUNABLES": "glibc.cpu.hwcaps=-AVX2"]) == nil)
    }

    @Test("the producer's thresholds are within what glibc accepts and above a 1 MB batch")
    func producerValues() {
        let tuning = MallocTuning.producer
        #expect(tuning.mmapThreshold <= 32 << 20, "glibc refuses an mmap threshold above 32 MiB on 64-bit")
        #expect(tuning.mmapThreshold > 2 << 20, "a 1 MB batch and its LZ4 bound must stay below it")
        #expect(tuning.trimThreshold >= tuning.mmapThreshold)
        #expect(tuning.description == "mmap threshold 32 MiB, trim threshold 256 MiB, top pad 16 MiB")
    }

    #if os(Linux)
    /// The pattern of a lane's broker thread: a few 1 MiB buffers written and freed per batch.
    /// With glibc's adaptive thresholds the memory goes back to the kernel after each round
    /// (about 737 page faults per round here); tuned, the rounds after the first reuse it.
    @Test("tuned, buffers freed after a batch are reused without new page faults")
    func tunedBuffersStayInTheHeap() throws {
        #expect(MallocTuning.producer.apply())
        let faults = try Self.minorFaultsOfRounds(rounds: 20, buffers: 3, bytes: 1 << 20)
        // 3 MiB per round are 768 fresh pages; allow a few stray faults from elsewhere in the thread.
        #expect(faults < 64, "\(faults) page faults over 19 rounds of reused buffers")
    }

    /// Minor page faults of the calling thread over `rounds - 1` rounds (the first one warms up).
    /// Runs without suspension points, so the whole loop stays on one thread.
    static func minorFaultsOfRounds(rounds: Int, buffers: Int, bytes: Int) throws -> Int {
        var before = 0
        for round in 0..<rounds {
            if round == 1 { before = try minorFaultsOfThisThread() }
            let blocks = (0..<buffers).map { _ in malloc(bytes)! }
            for block in blocks { memset(block, 1, bytes) }
            for block in blocks { free(block) }
        }
        return try minorFaultsOfThisThread() - before
    }

    /// Field 10 (`minflt`) of `/proc/thread-self/stat`.
    static func minorFaultsOfThisThread() throws -> Int {
        let text = try String(contentsOfFile: "/proc/thread-self/stat", encoding: .utf8)
        let afterName = text[text.index(after: try #require(text.lastIndex(of: ")")))...]
        let fields = afterName.split(separator: " ")
        return try #require(Int(fields[7]))
    }
    #endif
}

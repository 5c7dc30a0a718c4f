import Foundation
@testable import HeraldApp
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
}

// Shared by the fuzz targets built from this file (scripts/fuzz compiles each target as one
// module with its sources): property checks that crash with a message libFuzzer records.

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `HERALD_FUZZ_VERBOSE=1` prints what each input did, for reading a reproducer.
let fuzzVerbose = getenv("HERALD_FUZZ_VERBOSE") != nil

func fuzzRequire(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
    if !condition() { fuzzFail(message()) }
}

func fuzzFail(_ message: String) -> Never {
    fatalError("fuzz property violated: \(message)")
}

/// Written to stderr unbuffered, so the trace survives the crash it is meant to explain.
func fuzzTrace(_ message: String) {
    var line = message + "\n"
    line.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
}

func fuzzBytes(_ data: UnsafePointer<UInt8>?, _ size: Int) -> [UInt8] {
    data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
}

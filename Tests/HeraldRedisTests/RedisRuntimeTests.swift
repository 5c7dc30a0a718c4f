import HeraldRedis
import Testing

@Suite("hiredis runtime version")
struct RedisRuntimeTests {
    @Test(
        "version from the library file name",
        arguments: [
            ("/usr/lib/x86_64-linux-gnu/libhiredis.so.0.14", "0.14"),
            ("/usr/lib/x86_64-linux-gnu/libhiredis.so.1.1.0", "1.1.0"),
            ("/opt/homebrew/lib/libhiredis.1.1.0.dylib", "1.1.0"),
            ("/usr/lib/libhiredis.so", nil),
        ] as [(String, String?)])
    func versionFromFileName(path: String, expected: String?) {
        #expect(RedisRuntime.versionInFileName(path) == expected)
    }

    @Test("the reported version agrees with the header and the mapped library")
    func reportedVersion() throws {
        let header = RedisRuntime.headerVersion
        #expect(header.split(separator: ".").count == 3)
        #if os(Linux)
            // The test binary links libhiredis dynamically, so the loader mapped it.
            let path = try #require(RedisRuntime.loadedLibraryPath)
            #expect(path.contains("libhiredis"))
            let fileVersion = try #require(RedisRuntime.versionInFileName(path))
            // Reported: the header's fuller version when the file agrees with it, else the file's.
            if header.hasPrefix(fileVersion) {
                #expect(RedisRuntime.hiredisVersion == header)
            } else {
                #expect(RedisRuntime.hiredisVersion == fileVersion)
            }
        #else
            #expect(!RedisRuntime.hiredisVersion.isEmpty)
        #endif
    }
}

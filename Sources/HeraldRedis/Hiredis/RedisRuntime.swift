import CHiredis
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Which hiredis this process runs with, for `herald version`.
public enum RedisRuntime {
    /// The hiredis version HeraldRedis was compiled against (from `hiredis.h`).
    public static let headerVersion = "\(HIREDIS_MAJOR).\(HIREDIS_MINOR).\(HIREDIS_PATCH)"

    /// The hiredis shared library this process mapped, from `/proc/self/maps` (Linux), or nil
    /// when it is not visible there (static link, macOS).
    public static var loadedLibraryPath: String? {
        guard let maps = readProcFile("/proc/self/maps") else { return nil }
        for line in maps.split(separator: "\n") {
            guard let slash = line.firstIndex(of: "/") else { continue }
            let path = line[slash...]
            if path.split(separator: "/").last?.hasPrefix("libhiredis") == true { return String(path) }
        }
        return nil
    }

    /// The version actually loaded. hiredis 0.14 has no runtime version call, so it is read
    /// from the mapped file's name (`libhiredis.so.0.14` or `libhiredis.so.1.1.0`). When that
    /// name agrees with the header it is the header's fuller version; when it disagrees the
    /// file's version is reported, since that is the code running. Without a mapped file
    /// (static link, no /proc) it is the header version.
    public static var hiredisVersion: String {
        guard let path = loadedLibraryPath, let fileVersion = versionInFileName(path) else { return headerVersion }
        if headerVersion == fileVersion || headerVersion.hasPrefix(fileVersion + ".") { return headerVersion }
        return fileVersion
    }

    /// Reads a /proc file to its end (they report size 0, so size-based readers get nothing).
    private static func readProcFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var contents: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            contents.append(contentsOf: chunk[0..<count])
        }
        return String(decoding: contents, as: UTF8.self)
    }

    /// `0.14` from `/usr/lib/x86_64-linux-gnu/libhiredis.so.0.14`, `1.1.0` from `libhiredis.1.1.0.dylib`.
    public static func versionInFileName(_ path: String) -> String? {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        let parts = name.split(separator: ".")
        let numbers = parts.drop(while: { Int($0) == nil }).prefix(while: { Int($0) != nil })
        return numbers.isEmpty ? nil : numbers.joined(separator: ".")
    }
}

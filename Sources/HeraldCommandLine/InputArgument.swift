import Foundation

/// Command-line values that may name a file instead: `@path` reads the file, `@-` reads stdin.
public enum InputArgument {
    public static func resolve(_ value: String) throws -> String {
        guard value.hasPrefix("@") else { return value }
        let path = String(value.dropFirst())
        if path == "-" {
            return String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
        }
        do {
            return try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw CommandFailure("cannot read \(path): \(error.localizedDescription)")
        }
    }
}

/// A failure a command reports as one line on stderr with a non-zero exit.
public struct CommandFailure: Error, CustomStringConvertible {
    public var description: String
    public init(_ message: String) { description = message }
}

/// Standard error as a `TextOutputStream`, for `print(..., to:)`.
public struct StandardError: TextOutputStream {
    public init() {}
    public mutating func write(_ string: String) {
        FileHandle.standardError.write(Data(string.utf8))
    }
}

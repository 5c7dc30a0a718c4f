/// Why a byte sequence is not JSON, and where: `offset` counts bytes from 0, `line` and
/// `column` count from 1 (columns in bytes, which is what editors show for ASCII JSON).
public struct JSONSyntaxError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Stable code, one of `unexpected_end`, `unexpected_character`, `invalid_string`,
    /// `invalid_number`, `invalid_utf8`, `too_deep`, `trailing_content`.
    public var code: String
    public var offset: Int
    public var line: Int
    public var column: Int
    public var message: String

    public var description: String {
        "\(message) at line \(line), column \(column)"
    }
}

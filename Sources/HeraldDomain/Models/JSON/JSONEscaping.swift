/// JSON string escaping for encoders outside this module that write records byte by byte
/// (the fan-out's delivery writer), so every writer escapes exactly as `DeliveryRecord` does.
public enum JSONEscaping {
    /// Appends the escaped content of `source` (UTF-8, without surrounding quotes).
    public static func append(_ source: UnsafeBufferPointer<UInt8>, to bytes: inout [UInt8]) {
        JSONOutput.appendEscaped(utf8: source, to: &bytes)
    }
}

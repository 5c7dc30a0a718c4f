import Foundation

/// Progress lines on standard error, so standard output carries only the result table.
enum Console {
    static func say(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    static func count(_ value: Int) -> String {
        let digits = Array(String(value))
        var text = ""
        for (offset, digit) in digits.enumerated() {
            if offset > 0 && (digits.count - offset) % 3 == 0 { text.append(",") }
            text.append(digit)
        }
        return text
    }

    static func fixed(_ value: Double, _ decimals: Int = 1) -> String {
        String(format: "%.\(decimals)f", value)
    }
}

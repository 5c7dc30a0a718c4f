import Foundation

/// What a device shows after the pushes it was sent, as iOS and Android show them: each alert
/// the service accepted is shown, replacing the one shown under the same identifier (the APNs
/// `apns-collapse-id`, the Android notification `tag`), and a Herald withdrawal (a silent push
/// naming an identifier under `herald.withdraw`, or `herald_withdraw` in FCM data) removes it.
/// The demo reads the local servers' recorded requests through it to show a correction
/// replacing the wrong text on the lock screen.
public enum LockScreen {
    /// The alerts a device with APNs `token` shows, oldest first, each as its `aps.alert` JSON.
    public static func apns(_ requests: [LocalAPNsServer.Request], token: String) -> [String] {
        var shown = Shown()
        for request in requests where request.token == token && request.status == 200 {
            let object = (try? JSONSerialization.jsonObject(with: Data(request.body))) as? [String: Any]
            if let withdraw = (object?["herald"] as? [String: Any])?["withdraw"] as? String {
                shown.remove(withdraw)
                continue
            }
            guard request.header("apns-push-type") ?? "alert" == "alert",
                let alert = (object?["aps"] as? [String: Any])?["alert"]
            else { continue }
            shown.show(Self.text(alert), identifier: request.header("apns-collapse-id"))
        }
        return shown.texts
    }

    /// The notifications a device with FCM `token` shows, oldest first, each as its
    /// `notification` JSON.
    public static func fcm(_ requests: [LocalFCMServer.Request], token: String) -> [String] {
        var shown = Shown()
        for request in requests where request.token == token && request.status == 200 {
            let message = ((try? JSONSerialization.jsonObject(with: Data(request.body))) as? [String: Any])?["message"] as? [String: Any]
            if let withdraw = (message?["data"] as? [String: Any])?["herald_withdraw"] as? String {
                shown.remove(withdraw)
                continue
            }
            guard let notification = message?["notification"] else { continue }
            let android = message?["android"] as? [String: Any]
            shown.show(Self.text(notification), identifier: (android?["notification"] as? [String: Any])?["tag"] as? String)
        }
        return shown.texts
    }

    private struct Shown {
        var entries: [(identifier: String?, text: String)] = []

        mutating func show(_ text: String, identifier: String?) {
            if let identifier, let index = entries.firstIndex(where: { $0.identifier == identifier }) {
                entries.remove(at: index)
            }
            entries.append((identifier, text))
        }

        mutating func remove(_ identifier: String) { entries.removeAll { $0.identifier == identifier } }

        var texts: [String] { entries.map(\.text) }
    }

    private static func text(_ value: Any) -> String {
        if let string = value as? String { return string }
        guard let data = try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .withoutEscapingSlashes]) else {
            return "\(value)"
        }
        return String(decoding: data, as: UTF8.self)
    }
}

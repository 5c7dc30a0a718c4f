import Foundation
import HeraldDomain

/// A hub's own credentials as the push clients take them, each key parsed and checked by the
/// same code that checks the deployment's at start-up.
public struct HubPushCredentials: Sendable {
    public var apns: APNsCredentials?
    public var fcm: FCMServiceAccount?
    public var vapid: VAPIDCredentials?
    public var wns: WNSCredentials?

    /// Parses every service of `credentials`; the first problem is thrown, its `field` being
    /// the path of the member in a hub document (`credentials.apns.key`).
    public init(_ credentials: HubCredentials, hub: HubName) throws(PushConfigurationError) {
        let source = "hub \(hub)"
        if let apns = credentials.apns {
            do {
                self.apns = try APNsCredentials.make(
                    pem: apns.key, keySource: source, keyId: apns.keyId, teamId: apns.teamId, topics: apns.topics,
                    endpoint: apns.endpoint)
            } catch {
                throw Self.located(error, in: "credentials.apns", fields: ["PEM": "key", "key id": "keyId", "team id": "teamId"])
            }
        }
        if let fcm = credentials.fcm {
            var bytes: [UInt8] = []
            fcm.serviceAccountJSON.write(into: &bytes)
            do {
                self.fcm = try FCMServiceAccount.parse(bytes, source: source)
            } catch {
                throw Self.located(error, in: "credentials.fcm.serviceAccount", fields: [:])
            }
        }
        if let webPush = credentials.webPush {
            do {
                vapid = try VAPIDCredentials.make(privateKey: webPush.privateKey, subject: webPush.subject, source: source)
            } catch {
                throw Self.located(error, in: "credentials.webPush", fields: ["private key": "privateKey"])
            }
        }
        if let wns = credentials.wns {
            self.wns = WNSCredentials(
                packageSid: wns.packageSid, clientSecret: wns.clientSecret,
                tokenURL: wns.tokenURL.flatMap(URL.init(string:)) ?? WNSCredentials.production,
                endpoint: wns.endpoint.flatMap(URL.init(string:)))
        }
    }

    /// What is wrong with `credentials` as a hub document's issues (nothing: empty).
    public static func problems(_ credentials: HubCredentials, hub: HubName) -> [ValidationIssue] {
        do {
            _ = try HubPushCredentials(credentials, hub: hub)
            return []
        } catch {
            return [ValidationIssue(field: error.field ?? "credentials", code: ValidationIssue.Code.invalidValue, message: error.problem)]
        }
    }

    /// `error` with its field as the member's path under `prefix`.
    private static func located(_ error: PushConfigurationError, in prefix: String, fields: [String: String]) -> PushConfigurationError {
        var located = error
        located.field = error.field.map { "\(prefix).\(fields[$0] ?? $0)" } ?? prefix
        return located
    }
}

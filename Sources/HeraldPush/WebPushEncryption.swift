import Crypto
import Foundation
import HeraldDomain

/// Message encryption for Web Push (RFC 8291) in the `aes128gcm` content coding (RFC 8188),
/// composed of swift-crypto's primitives: an ephemeral P-256 key agreement with the browser's
/// key, HKDF-SHA-256 keyed by the browser's auth secret and a random salt, then AES-128-GCM over
/// one record. The body is the coding's header (salt, record size, the ephemeral public key as
/// the key id) followed by the record and its tag.
public enum WebPushEncryption {
    /// The record size written in the header: one record always fits in it (4,096 bytes is the
    /// most a push service must accept, RFC 8030 §7.2).
    public static let recordSize: UInt32 = 4096
    /// salt (16) + record size (4) + key id length (1) + key id (65).
    public static let headerBytes = 86
    /// The most plaintext one record of a 4,096-byte body holds: 4096 − 86 − 16 (tag) − 1 (delimiter).
    public static let maximumPlaintextBytes = 3993

    public enum Failure: Error, Sendable, Hashable, CustomStringConvertible {
        case tooLarge(bytes: Int)
        case unusableKey

        public var description: String {
            switch self {
            case .tooLarge(let bytes):
                "the payload has \(bytes) bytes; an encrypted web push message holds at most \(WebPushEncryption.maximumPlaintextBytes)"
            case .unusableKey: "the subscription's p256dh is not a point on P-256"
            }
        }
    }

    /// A fresh P-256 key for one message: a random scalar from the system's generator, its
    /// public point computed by swift-crypto. `P256.KeyAgreement.PrivateKey()` would do the same
    /// and then run a FIPS pairwise test (an ECDSA signature and its check) on every key, which
    /// measured as more than half of the whole encryption (`make bench`, the micro rows).
    public static func messageKey() -> P256.KeyAgreement.PrivateKey {
        while true {
            let scalar = randomBytes(.bits256)
            // A scalar of zero or past the group order (odds about 2^-32) is refused: draw again.
            if let key = try? P256.KeyAgreement.PrivateKey(rawRepresentation: scalar) { return key }
        }
    }

    /// Random bytes from swift-crypto's generator (BoringSSL's, seeded by the system).
    public static func randomBytes(_ size: SymmetricKeySize) -> [UInt8] {
        SymmetricKey(size: size).withUnsafeBytes { Array($0) }
    }

    /// The encrypted body of `plaintext` for `subscription`. `serverKey` and `salt` are fresh per
    /// message; tests pass RFC 8291's own to reproduce its example.
    public static func encrypt(
        _ plaintext: some Collection<UInt8>, for subscription: WebPushSubscription,
        serverKey: P256.KeyAgreement.PrivateKey = WebPushEncryption.messageKey(),
        salt: [UInt8] = WebPushEncryption.randomBytes(.bits128)
    ) throws(Failure) -> [UInt8] {
        guard plaintext.count <= maximumPlaintextBytes else { throw .tooLarge(bytes: plaintext.count) }
        let browserKey: P256.KeyAgreement.PublicKey
        let shared: SharedSecret
        do {
            browserKey = try P256.KeyAgreement.PublicKey(x963Representation: subscription.p256dh)
            shared = try serverKey.sharedSecretFromKeyAgreement(with: browserKey)
        } catch {
            throw .unusableKey
        }
        let serverPublic = Array(serverKey.publicKey.x963Representation)
        // RFC 8291 §3.3: the input keying material, bound to both public keys and the auth secret.
        let keyInfo = Array("WebPush: info".utf8) + [0] + subscription.p256dh + serverPublic
        let inputKey = shared.hkdfDerivedSymmetricKey(
            using: SHA256.self, salt: subscription.auth, sharedInfo: keyInfo, outputByteCount: 32)
        // RFC 8188 §2.2-2.3: the content encryption key and nonce, from the message's salt.
        let pseudoRandomKey = HKDF<SHA256>.extract(inputKeyMaterial: inputKey, salt: salt)
        let contentKey = HKDF<SHA256>.expand(
            pseudoRandomKey: pseudoRandomKey, info: Array("Content-Encoding: aes128gcm".utf8) + [0], outputByteCount: 16)
        let nonceBytes = HKDF<SHA256>.expand(
            pseudoRandomKey: pseudoRandomKey, info: Array("Content-Encoding: nonce".utf8) + [0], outputByteCount: 12)
        // One record, the last, so its padding delimiter is 0x02 (RFC 8188 §2).
        var record = Array(plaintext)
        record.append(0x02)
        let sealed: AES.GCM.SealedBox
        do {
            let nonce = try nonceBytes.withUnsafeBytes { try AES.GCM.Nonce(data: $0) }
            sealed = try AES.GCM.seal(record, using: contentKey, nonce: nonce)
        } catch {
            // A 16-byte key and a 12-byte nonce, both made above: only a broken build fails here.
            preconditionFailure("AES-GCM refused its own key or nonce: \(error)")
        }
        var body: [UInt8] = []
        body.reserveCapacity(headerBytes + record.count + 16)
        body += salt
        body += withUnsafeBytes(of: recordSize.bigEndian, Array.init)
        body.append(UInt8(serverPublic.count))
        body += serverPublic
        body += sealed.ciphertext
        body += sealed.tag
        return body
    }
}

import Crypto
import Foundation
import NIOSSL
import X509

/// A certificate authority made at run time for the local push servers: a self-signed P-256 CA
/// and a leaf certificate for `localhost` and `127.0.0.1` signed by it.
///
/// Clients trust the CA (`writeCAFile(in:)`) with full certificate verification on; nothing is
/// checked in and no openssl command is run.
public struct LocalCertificateAuthority: Sendable {
    /// The CA certificate, PEM.
    public let caCertificatePEM: String
    /// The servers' certificate (SANs DNS `localhost`, IP `127.0.0.1`), PEM.
    public let serverCertificatePEM: String
    /// The servers' private key (PKCS#8), PEM.
    let serverKeyPEM: String

    /// Generates a new CA and server certificate, valid from an hour ago for `validity`.
    public init(validity: Duration = .seconds(30 * 24 * 3600)) throws {
        let notBefore = Date().addingTimeInterval(-3600)
        let notAfter = Date().addingTimeInterval(TimeInterval(validity.components.seconds))

        let caKey = P256.Signing.PrivateKey()
        let caPublicKey = Certificate.PublicKey(caKey.publicKey)
        let caName = try DistinguishedName {
            OrganizationName("Herald tests")
            CommonName("Herald Test CA")
        }
        let caKeyIdentifier = SubjectKeyIdentifier(hash: caPublicKey)
        let ca = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: caPublicKey,
            notValidBefore: notBefore,
            notValidAfter: notAfter,
            issuer: caName,
            subject: caName,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                caKeyIdentifier
            },
            issuerPrivateKey: Certificate.PrivateKey(caKey)
        )

        let serverKey = P256.Signing.PrivateKey()
        let serverPublicKey = Certificate.PublicKey(serverKey.publicKey)
        let server = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: serverPublicKey,
            notValidBefore: notBefore,
            notValidAfter: notAfter,
            issuer: caName,
            subject: try DistinguishedName {
                OrganizationName("Herald tests")
                CommonName("localhost")
            },
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames([.dnsName("localhost"), .ipAddress(.init(contentBytes: [127, 0, 0, 1]))])
                AuthorityKeyIdentifier(keyIdentifier: caKeyIdentifier.keyIdentifier)
                SubjectKeyIdentifier(hash: serverPublicKey)
            },
            issuerPrivateKey: Certificate.PrivateKey(caKey)
        )

        caCertificatePEM = try ca.serializeAsPEM().pemString
        serverCertificatePEM = try server.serializeAsPEM().pemString
        serverKeyPEM = serverKey.pemRepresentation
    }

    /// Writes the CA certificate to `herald-test-ca.pem` in `directory` and returns its path,
    /// for a client's trust roots (`.file(path)`).
    public func writeCAFile(in directory: URL) throws -> String {
        let file = directory.appendingPathComponent("herald-test-ca.pem")
        try Data(caCertificatePEM.utf8).write(to: file, options: .atomic)
        return file.path
    }

    /// A TLS server configuration with the server certificate and ALPN `h2` only.
    public func makeServerTLSConfiguration() throws -> TLSConfiguration {
        let certificate = try NIOSSLCertificate(bytes: Array(serverCertificatePEM.utf8), format: .pem)
        let key = try NIOSSLPrivateKey(bytes: Array(serverKeyPEM.utf8), format: .pem)
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(certificate)],
            privateKey: .privateKey(key)
        )
        configuration.applicationProtocols = ["h2"]
        return configuration
    }
}

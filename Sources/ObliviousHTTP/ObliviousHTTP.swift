import Crypto
import Foundation

/// One Oblivious HTTP key configuration (RFC 9458 §3): a key id, a KEM and its public key, and the symmetric suites
/// the gateway accepts. This implementation speaks the RFC's suite: DHKEM(X25519, HKDF-SHA256), HKDF-SHA256,
/// AES-128-GCM.
public struct ObliviousHTTPKeyConfiguration: Sendable, Hashable {
    /// A symmetric suite: KDF and AEAD ids (HPKE registry values).
    public struct Suite: Sendable, Hashable {
        /// The KDF id (1 = HKDF-SHA256).
        public var kdf: UInt16
        /// The AEAD id (1 = AES-128-GCM).
        public var aead: UInt16

        /// A suite.
        public init(kdf: UInt16, aead: UInt16) {
            self.kdf = kdf
            self.aead = aead
        }
    }

    /// DHKEM(X25519, HKDF-SHA256).
    public static let x25519KEM: UInt16 = 0x0020
    /// HKDF-SHA256, AES-128-GCM: the suite this implementation uses.
    public static let supportedSuite = Suite(kdf: 0x0001, aead: 0x0001)

    /// The key id, echoed in every encapsulated request.
    public var keyID: UInt8
    /// The KEM id.
    public var kem: UInt16
    /// The gateway's public key (32 bytes for X25519).
    public var publicKey: Data
    /// The suites the gateway accepts.
    public var suites: [Suite]

    /// A key configuration.
    public init(keyID: UInt8, kem: UInt16 = x25519KEM, publicKey: Data, suites: [Suite] = [supportedSuite]) {
        self.keyID = keyID
        self.kem = kem
        self.publicKey = publicKey
        self.suites = suites
    }

    /// Reads one key configuration (the RFC's `Key Config` structure, without a length prefix).
    public init(decoding data: Data) throws(ObliviousHTTPError) {
        var reader = ByteReader([UInt8](data))
        self = try Self.read(&reader)
        guard reader.isAtEnd else {
            throw ObliviousHTTPError(.badKeyConfiguration, "\(reader.left) bytes after the key configuration")
        }
    }

    /// Reads an `application/ohttp-keys` body: key configurations, each with a 2-byte length prefix (RFC 9458 §3.2).
    /// Configurations of a KEM other than X25519 are skipped (their length prefix says where the next one starts;
    /// their public key's size depends on their KEM); the X25519 ones are returned in order. A malformed list, a
    /// malformed X25519 configuration, or a list with no X25519 configuration fails.
    public static func list(decoding data: Data) throws(ObliviousHTTPError) -> [ObliviousHTTPKeyConfiguration] {
        guard data.count <= 64 << 10 else {
            throw ObliviousHTTPError(.badKeyConfiguration, "key configurations of \(data.count) bytes")
        }
        var reader = ByteReader([UInt8](data))
        var configurations: [ObliviousHTTPKeyConfiguration] = []
        var skipped: [UInt16] = []
        while !reader.isAtEnd {
            let length = try reader.uint16("configuration length")
            let bytes = try reader.take(Int(length), "key configuration")
            guard bytes.count >= 3 else {
                throw ObliviousHTTPError(.badKeyConfiguration, "a key configuration of \(bytes.count) bytes")
            }
            let kem = UInt16(bytes[1]) << 8 | UInt16(bytes[2])
            guard kem == x25519KEM else {
                skipped.append(kem)
                continue
            }
            var one = ByteReader(bytes)
            let configuration = try read(&one)
            guard one.isAtEnd else {
                throw ObliviousHTTPError(.badKeyConfiguration, "\(one.left) bytes after a key configuration")
            }
            configurations.append(configuration)
        }
        guard !configurations.isEmpty else {
            let kems = skipped.map { "0x" + String($0, radix: 16) }.joined(separator: ", ")
            throw ObliviousHTTPError(
                .badKeyConfiguration,
                skipped.isEmpty ? "no key configuration" : "no X25519 key configuration (only KEM ids \(kems))")
        }
        return configurations
    }

    private static func read(_ reader: inout ByteReader) throws(ObliviousHTTPError) -> ObliviousHTTPKeyConfiguration {
        let keyID = try reader.uint8("key id")
        let kem = try reader.uint16("kem id")
        guard kem == x25519KEM else {
            throw ObliviousHTTPError(.badKeyConfiguration, "kem id \(kem) is not X25519 (32)")
        }
        let publicKey = Data(try reader.take(32, "public key"))
        let suitesLength = try reader.uint16("cipher suites length")
        guard suitesLength > 0, suitesLength % 4 == 0 else {
            throw ObliviousHTTPError(
                .badKeyConfiguration, "cipher suites length \(suitesLength) is not a positive multiple of 4")
        }
        var suites: [Suite] = []
        var suiteReader = ByteReader(try reader.take(Int(suitesLength), "cipher suites"))
        while !suiteReader.isAtEnd {
            suites.append(Suite(kdf: try suiteReader.uint16("kdf id"), aead: try suiteReader.uint16("aead id")))
        }
        return ObliviousHTTPKeyConfiguration(keyID: keyID, kem: kem, publicKey: publicKey, suites: suites)
    }

    /// The `Key Config` encoding.
    public func encoded() -> Data {
        var out = Data([keyID])
        out.append(contentsOf: kem.bigEndianBytes)
        out.append(publicKey)
        out.append(contentsOf: UInt16(clamping: suites.count * 4).bigEndianBytes)
        for suite in suites {
            out.append(contentsOf: suite.kdf.bigEndianBytes)
            out.append(contentsOf: suite.aead.bigEndianBytes)
        }
        return out
    }

    /// An `application/ohttp-keys` body holding `configurations`.
    public static func listEncoded(_ configurations: [ObliviousHTTPKeyConfiguration]) -> Data {
        var out = Data()
        for configuration in configurations {
            let one = configuration.encoded()
            out.append(contentsOf: UInt16(clamping: one.count).bigEndianBytes)
            out.append(one)
        }
        return out
    }
}

/// The client side of Oblivious HTTP: encapsulates a binary HTTP request for a gateway's key configuration and
/// returns the context that opens the gateway's encapsulated response.
public enum ObliviousHTTPClient {
    /// The media type of an encapsulated request.
    public static let requestMediaType = "message/ohttp-req"
    /// The media type of an encapsulated response.
    public static let responseMediaType = "message/ohttp-res"
    /// The media type of a key configuration list.
    public static let keysMediaType = "application/ohttp-keys"

    /// Encapsulates `request` (a binary HTTP message) for `configuration` (RFC 9458 §4.3).
    public static func encapsulate(_ request: Data, for configuration: ObliviousHTTPKeyConfiguration)
        throws(ObliviousHTTPError) -> (encapsulated: Data, context: ObliviousHTTPResponseContext)
    {
        guard configuration.kem == ObliviousHTTPKeyConfiguration.x25519KEM,
            configuration.suites.contains(ObliviousHTTPKeyConfiguration.supportedSuite)
        else {
            throw ObliviousHTTPError(
                .badKeyConfiguration,
                "key \(configuration.keyID) offers no suite this client supports (HKDF-SHA256, AES-128-GCM)")
        }
        let header = OHTTPSuite.header(keyID: configuration.keyID)
        do {
            let publicKey = try Curve25519.KeyAgreement.PublicKey(rawRepresentation: configuration.publicKey)
            var sender = try HPKE.Sender(
                recipientKey: publicKey, ciphersuite: OHTTPSuite.ciphersuite, info: OHTTPSuite.requestInfo(header))
            let ciphertext = try sender.seal(request)
            let secret = try sender.exportSecret(
                context: Data(OHTTPSuite.responseLabel.utf8), outputByteCount: OHTTPSuite.secretLength)
            var encapsulated = header
            encapsulated.append(sender.encapsulatedKey)
            encapsulated.append(ciphertext)
            return (
                encapsulated,
                ObliviousHTTPResponseContext(
                    secret: secret.withUnsafeBytes { Data($0) }, encapsulatedKey: sender.encapsulatedKey)
            )
        } catch {
            throw ObliviousHTTPError(.badKeyConfiguration, "key \(configuration.keyID): \(error)")
        }
    }
}

/// What a client keeps from an encapsulated request to open the response to it.
public struct ObliviousHTTPResponseContext: Sendable {
    /// The exported secret's bytes (held as `Data`: swift-crypto's key types are not `Sendable`).
    let secret: Data
    let encapsulatedKey: Data

    /// Opens an encapsulated response (RFC 9458 §4.4); returns the binary HTTP response.
    public func decapsulate(_ response: Data) throws(ObliviousHTTPError) -> Data {
        guard response.count >= OHTTPSuite.responseNonceLength + 16 else {
            throw ObliviousHTTPError(
                .decryptionFailed, "encapsulated response of \(response.count) bytes is shorter than its nonce and tag")
        }
        let nonce = response.prefix(OHTTPSuite.responseNonceLength)
        let sealed = response.dropFirst(OHTTPSuite.responseNonceLength)
        let (key, aeadNonce) = OHTTPSuite.responseKeys(
            secret: secret, encapsulatedKey: encapsulatedKey, responseNonce: Data(nonce))
        do {
            let box = try AES.GCM.SealedBox(
                nonce: AES.GCM.Nonce(data: aeadNonce), ciphertext: sealed.dropLast(16), tag: sealed.suffix(16))
            return try AES.GCM.open(box, using: key)
        } catch {
            throw ObliviousHTTPError(.decryptionFailed, "the encapsulated response does not decrypt")
        }
    }
}

/// The gateway side: holds the private key, opens encapsulated requests and seals the responses.
public struct ObliviousHTTPGateway: Sendable {
    /// The key configuration clients fetch.
    public let configuration: ObliviousHTTPKeyConfiguration
    /// The X25519 private key's raw bytes (swift-crypto's key type is not `Sendable`).
    private let privateKeyRaw: Data

    /// A gateway with a new key under `keyID`.
    public init(keyID: UInt8) {
        self.init(keyID: keyID, privateKey: Curve25519.KeyAgreement.PrivateKey())
    }

    /// A gateway with the given X25519 private key (raw, 32 bytes) under `keyID`.
    public init(keyID: UInt8, privateKeyRaw: Data) throws(ObliviousHTTPError) {
        do {
            self.init(
                keyID: keyID, privateKey: try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: privateKeyRaw))
        } catch {
            throw ObliviousHTTPError(.badKeyConfiguration, "not an X25519 private key")
        }
    }

    private init(keyID: UInt8, privateKey: Curve25519.KeyAgreement.PrivateKey) {
        self.privateKeyRaw = privateKey.rawRepresentation
        configuration = ObliviousHTTPKeyConfiguration(keyID: keyID, publicKey: privateKey.publicKey.rawRepresentation)
    }

    /// Opens an encapsulated request; returns the binary HTTP request and the context to seal its response.
    /// ``ObliviousHTTPError/Code/unknownKey`` for another key id (the client should refetch the configuration).
    public func decapsulate(_ request: Data) throws(ObliviousHTTPError) -> (
        request: Data, context: ObliviousHTTPGatewayContext
    ) {
        let bytes = [UInt8](request)
        guard bytes.count >= 7 + 32 + 16 else {
            throw ObliviousHTTPError(.decryptionFailed, "encapsulated request of \(bytes.count) bytes is too short")
        }
        guard bytes[0] == configuration.keyID else {
            throw ObliviousHTTPError(.unknownKey, "key id \(bytes[0]) is not this gateway's (\(configuration.keyID))")
        }
        let header = Data(bytes[0..<7])
        guard header == OHTTPSuite.header(keyID: configuration.keyID) else {
            throw ObliviousHTTPError(
                .decryptionFailed, "the request's KEM, KDF or AEAD is not X25519, HKDF-SHA256, AES-128-GCM")
        }
        let encapsulatedKey = Data(bytes[7..<39])
        do {
            let privateKey = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: privateKeyRaw)
            var recipient = try HPKE.Recipient(
                privateKey: privateKey, ciphersuite: OHTTPSuite.ciphersuite,
                info: OHTTPSuite.requestInfo(header), encapsulatedKey: encapsulatedKey)
            let plaintext = try recipient.open(Data(bytes[39...]))
            let secret = try recipient.exportSecret(
                context: Data(OHTTPSuite.responseLabel.utf8), outputByteCount: OHTTPSuite.secretLength)
            return (
                plaintext,
                ObliviousHTTPGatewayContext(
                    secret: secret.withUnsafeBytes { Data($0) }, encapsulatedKey: encapsulatedKey)
            )
        } catch {
            throw ObliviousHTTPError(.decryptionFailed, "the encapsulated request does not decrypt")
        }
    }
}

/// What a gateway keeps from an encapsulated request to seal the response to it.
public struct ObliviousHTTPGatewayContext: Sendable {
    /// The exported secret's bytes.
    let secret: Data
    let encapsulatedKey: Data

    /// Seals `response` (a binary HTTP response) with a fresh random nonce.
    public func encapsulate(_ response: Data) throws(ObliviousHTTPError) -> Data {
        var nonce = Data(count: OHTTPSuite.responseNonceLength)
        var generator = SystemRandomNumberGenerator()
        for index in nonce.indices { nonce[index] = UInt8.random(in: .min ... .max, using: &generator) }
        return try encapsulate(response, responseNonce: nonce)
    }

    /// Seals `response` with the given nonce (for test vectors; a nonce must never be reused).
    func encapsulate(_ response: Data, responseNonce: Data) throws(ObliviousHTTPError) -> Data {
        let (key, aeadNonce) = OHTTPSuite.responseKeys(
            secret: secret, encapsulatedKey: encapsulatedKey, responseNonce: responseNonce)
        do {
            let box = try AES.GCM.seal(response, using: key, nonce: AES.GCM.Nonce(data: aeadNonce))
            return responseNonce + box.ciphertext + box.tag
        } catch {
            throw ObliviousHTTPError(.decryptionFailed, "the response could not be sealed: \(error)")
        }
    }

    /// The exported secret (for test vectors).
    var exportedSecret: Data { secret }
}

/// The RFC 9458 constants and derivations for the one suite.
enum OHTTPSuite {
    static var ciphersuite: HPKE.Ciphersuite {
        HPKE.Ciphersuite(kem: .Curve25519_HKDF_SHA256, kdf: .HKDF_SHA256, aead: .AES_GCM_128)
    }
    static let requestLabel = "message/bhttp request"
    static let responseLabel = "message/bhttp response"
    /// max(Nn, Nk) for AES-128-GCM.
    static let secretLength = 16
    static let responseNonceLength = 16

    static func header(keyID: UInt8) -> Data {
        var header = Data([keyID])
        header.append(contentsOf: ObliviousHTTPKeyConfiguration.x25519KEM.bigEndianBytes)
        header.append(contentsOf: ObliviousHTTPKeyConfiguration.supportedSuite.kdf.bigEndianBytes)
        header.append(contentsOf: ObliviousHTTPKeyConfiguration.supportedSuite.aead.bigEndianBytes)
        return header
    }

    static func requestInfo(_ header: Data) -> Data {
        var info = Data(requestLabel.utf8)
        info.append(0)
        info.append(header)
        return info
    }

    /// salt = enc || response_nonce; prk = Extract(salt, secret); key = Expand(prk, "key", 16);
    /// nonce = Expand(prk, "nonce", 12).
    static func responseKeys(secret: Data, encapsulatedKey: Data, responseNonce: Data) -> (SymmetricKey, Data) {
        let prk = HKDF<SHA256>.extract(
            inputKeyMaterial: SymmetricKey(data: secret), salt: encapsulatedKey + responseNonce)
        let key = HKDF<SHA256>.expand(pseudoRandomKey: prk, info: Data("key".utf8), outputByteCount: 16)
        let nonce = HKDF<SHA256>.expand(pseudoRandomKey: prk, info: Data("nonce".utf8), outputByteCount: 12)
        return (key, nonce.withUnsafeBytes { Data($0) })
    }
}

/// A bounds-checked big-endian reader for key configurations.
struct ByteReader {
    private let bytes: [UInt8]
    private var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var isAtEnd: Bool { offset >= bytes.count }
    var left: Int { bytes.count - offset }

    mutating func take(_ count: Int, _ what: String) throws(ObliviousHTTPError) -> [UInt8] {
        guard count >= 0, count <= left else {
            throw ObliviousHTTPError(.badKeyConfiguration, "\(what): needs \(count) bytes, \(left) left")
        }
        defer { offset += count }
        return Array(bytes[offset..<(offset + count)])
    }

    mutating func uint8(_ what: String) throws(ObliviousHTTPError) -> UInt8 { try take(1, what)[0] }

    mutating func uint16(_ what: String) throws(ObliviousHTTPError) -> UInt16 {
        let two = try take(2, what)
        return UInt16(two[0]) << 8 | UInt16(two[1])
    }
}

extension UInt16 {
    var bigEndianBytes: [UInt8] { [UInt8(self >> 8), UInt8(self & 0xff)] }
}

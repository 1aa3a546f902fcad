import AdMediation
import Foundation
import MediationFileFormat
import Testing

/// A network entry's `tcf_vendor_id` (issue 44 item 1): the network's IAB Global Vendor List id. The TCF v2 "Consent
/// string and vendor list formats" specification encodes vendor ids in 16-bit fields (MaxVendorId, vendor ranges)
/// starting at 1, so a vendor id is a whole number 1…65535.
@Suite("Network privacy keys of the file form", .timeLimit(.minutes(1)))
struct NetworkPrivacyFileTests {
    /// `{"networks": {"cb": …}}`, so errors carry the field path a configuration file gives them.
    struct Networks: Codable {
        var networks: [String: NetworkPrivacySettings]
    }

    func decode(_ entry: String) throws -> NetworkPrivacySettings? {
        try JSONDecoder().decode(Networks.self, from: Data(#"{"networks": {"cb": \#(entry)}}"#.utf8)).networks["cb"]
    }

    func problem(_ entry: String) -> String? {
        do {
            _ = try decode(entry)
            return nil
        } catch let error as DecodingError {
            return ConfigurationPath.describe(error)
        } catch {
            return "\(error)"
        }
    }

    @Test("a declared vendor id survives the round trip through the file form")
    func vendorIDRoundTrips() throws {
        let read = try #require(try decode(#"{"type": "chartboost", "tcf_vendor_id": 755}"#))
        #expect(read.tcfVendorID == 755)
        let written = try JSONEncoder().encode(Networks(networks: ["cb": read]))
        let again = try JSONDecoder().decode(Networks.self, from: written)
        #expect(again.networks["cb"] == read)
        #expect(String(decoding: written, as: UTF8.self).contains(#""tcf_vendor_id":755"#))
    }

    @Test("an entry without the key declares no vendor id and writes none")
    func absentKeyIsNoVendorID() throws {
        #expect(try decode(#"{"type": "mars"}"#)?.tcfVendorID == nil)
        let written = try JSONEncoder().encode(NetworkPrivacySettings())
        #expect(String(decoding: written, as: UTF8.self) == "{}")
    }

    @Test("the lowest and highest vendor ids a TC string can name are accepted")
    func boundsAreAccepted() throws {
        #expect(try decode(#"{"tcf_vendor_id": 1}"#)?.tcfVendorID == 1)
        #expect(try decode(#"{"tcf_vendor_id": 65535}"#)?.tcfVendorID == 65_535)
    }

    @Test(
        "a vendor id that is not a whole number 1…65535 is refused, naming the field path",
        arguments: [
            ("0", "got 0"), ("-3", "got -3"), ("65536", "got 65536"), ("7.5", "got 7.5"), (#""755""#, "List id)"),
            ("null", "List id)"), ("true", "List id)"), ("1e300", "got 1e+300"),
        ])
    func badVendorIDsAreRefused(value: String, tail: String) {
        let message = problem(#"{"tcf_vendor_id": \#(value)}"#)
        #expect(
            message?.hasPrefix(
                "networks.cb.tcf_vendor_id: must be a whole number 1…65535 (an IAB Global Vendor List id")
                == true, "\(message ?? "accepted")")
        #expect(message?.hasSuffix(tail) == true, "\(message ?? "accepted")")
    }
}

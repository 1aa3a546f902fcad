import AdMediation
import AdTransport
import Testing

/// The destination policy's parser and rule (issue 31 items 4, 5, 7).
@Suite("Destination policy")
struct DestinationPolicyTests {
    /// One row of the parser table: a URL, the class of its host, whether the address is in an odd form, the
    /// canonical host.
    struct Row: Sendable, CustomTestStringConvertible {
        var url: String
        var expected: DestinationClass
        var odd: Bool
        var host: String
        var testDescription: String { url }
    }

    static let table: [Row] = [
        Row(url: "https://ads.example.com/x", expected: .public, odd: false, host: "ads.example.com"),
        Row(url: "http://127.attacker.invalid/", expected: .public, odd: false, host: "127.attacker.invalid"),
        Row(url: "http://localhost:8080/", expected: .loopback, odd: false, host: "localhost"),
        Row(url: "http://api.localhost/", expected: .loopback, odd: false, host: "api.localhost"),
        Row(url: "http://127.0.0.1:9/", expected: .loopback, odd: false, host: "127.0.0.1"),
        Row(url: "http://127.1.2.3/", expected: .loopback, odd: false, host: "127.1.2.3"),
        Row(url: "http://2130706433/", expected: .loopback, odd: true, host: "127.0.0.1"),
        Row(url: "http://0x7f000001/", expected: .loopback, odd: true, host: "127.0.0.1"),
        Row(url: "http://0x7f.1/", expected: .loopback, odd: true, host: "127.0.0.1"),
        Row(url: "http://0177.0.0.1/", expected: .loopback, odd: true, host: "127.0.0.1"),
        Row(url: "http://127.1/", expected: .loopback, odd: true, host: "127.0.0.1"),
        Row(url: "http://127.0.0.1./", expected: .loopback, odd: true, host: "127.0.0.1"),
        Row(url: "http://0.0.0.0:8080/", expected: .unspecified, odd: false, host: "0.0.0.0"),
        Row(url: "http://0/", expected: .unspecified, odd: true, host: "0.0.0.0"),
        Row(url: "http://[::1]:80/", expected: .loopback, odd: false, host: "::1"),
        Row(url: "http://[0:0:0:0:0:0:0:1]/", expected: .loopback, odd: false, host: "::1"),
        Row(url: "http://[::ffff:127.0.0.1]/", expected: .loopback, odd: true, host: "::ffff:7f00:1"),
        Row(url: "http://[::ffff:7f00:1]/", expected: .loopback, odd: true, host: "::ffff:7f00:1"),
        Row(url: "http://[::]/", expected: .unspecified, odd: false, host: "::"),
        Row(url: "http://[fe80::1]/", expected: .linkLocal, odd: false, host: "fe80::1"),
        Row(url: "http://[fd12:3456::1]/", expected: .private, odd: false, host: "fd12:3456::1"),
        Row(url: "http://[ff02::1]/", expected: .reserved, odd: false, host: "ff02::1"),
        Row(url: "https://[2001:db8::1]:8443/", expected: .public, odd: false, host: "2001:db8::1"),
        Row(url: "http://10.1.2.3/", expected: .private, odd: false, host: "10.1.2.3"),
        Row(url: "http://172.16.0.1/", expected: .private, odd: false, host: "172.16.0.1"),
        Row(url: "http://172.32.0.1/", expected: .public, odd: false, host: "172.32.0.1"),
        Row(url: "http://192.168.1.1/", expected: .private, odd: false, host: "192.168.1.1"),
        Row(url: "http://100.64.0.1/", expected: .private, odd: false, host: "100.64.0.1"),
        Row(url: "http://169.254.169.254/latest/meta-data", expected: .linkLocal, odd: false, host: "169.254.169.254"),
        Row(url: "http://0xa9fea9fe/", expected: .linkLocal, odd: true, host: "169.254.169.254"),
        Row(url: "http://255.255.255.255/", expected: .reserved, odd: false, host: "255.255.255.255"),
        Row(url: "http://224.0.0.1/", expected: .reserved, odd: false, host: "224.0.0.1"),
        Row(url: "https://8.8.8.8/", expected: .public, odd: false, host: "8.8.8.8"),
        Row(url: "HTTPS://ADS.Example.COM./", expected: .public, odd: false, host: "ads.example.com"),
    ]

    @Test(arguments: table)
    func eachHostFormIsParsedIntoItsClass(row: Row) throws {
        let destination = try URLDestination(parsing: row.url)
        #expect(destination.destinationClass == row.expected)
        #expect(destination.isOddAddressForm == row.odd)
        #expect(destination.host == row.host)
    }

    @Test func aNameThatStartsWith127IsANameNotLoopback() throws {
        let destination = try URLDestination(parsing: "http://127.attacker.invalid/admin")
        #expect(destination.destinationClass == .public)
        #expect(!destination.isAddress)
        #expect(DestinationPolicy.localDevelopment.allows("http://127.attacker.invalid/", as: .notice))
        #expect(refusal(.strict, "http://127.attacker.invalid/", .notice)?.code == .insecureHTTP)
    }

    @Test(arguments: [
        "javascript:alert(document.cookie)", "JavaScript:alert(1)", "file:///etc/passwd", "data:text/html,<script>",
        "ftp://files.example.com/x", "intent://scan/#Intent;end",
    ])
    func otherSchemesAreRefusedWithAReason(url: String) {
        for policy in [DestinationPolicy.strict, .localDevelopment] {
            #expect(throws: DestinationRefusal.self) { try policy.check(url, as: .click) }
            #expect(refusal(policy, url, .click)?.code == .scheme)
        }
    }

    @Test func theStrictPolicyAllowsHTTPSToPublicHostsOnly() {
        let strict = DestinationPolicy.strict
        #expect(strict.allows("https://ads.example.com/win?p=1", as: .notice))
        #expect(refusal(strict, "http://ads.example.com/win", .notice)?.code == .insecureHTTP)
        #expect(refusal(strict, "https://127.0.0.1:8443/admin", .notice)?.code == .loopback)
        #expect(refusal(strict, "https://localhost/admin", .notice)?.code == .loopback)
        #expect(refusal(strict, "https://10.0.0.7/", .tracking)?.code == .privateNetwork)
        #expect(refusal(strict, "https://169.254.169.254/", .asset)?.code == .privateNetwork)
    }

    @Test func oddAddressFormsAndReservedAddressesAreRefusedEvenWhenEverythingElseIsAllowed() {
        let open = DestinationPolicy(allowsHTTP: true, allowsLoopback: true, allowsPrivateNetworks: true)
        for url in ["http://2130706433/", "http://0x7f.1/", "http://[::ffff:127.0.0.1]/", "http://127.1/"] {
            #expect(refusal(open, url, .notice)?.code == .oddAddressForm, "\(url)")
        }
        for url in ["http://0.0.0.0/", "http://[::]/", "http://255.255.255.255/"] {
            #expect(refusal(open, url, .notice)?.code == .reservedAddress, "\(url)")
        }
        #expect(open.allows("http://127.0.0.1:9/", as: .notice))
    }

    @Test func aUserNameInTheURLIsRefused() {
        #expect(refusal(.strict, "https://user:pw@ads.example.com/", .notice)?.code == .credentialsInURL)
        #expect(refusal(.strict, "https://ads.example.com@127.0.0.1/", .notice)?.code == .credentialsInURL)
    }

    @Test(arguments: [
        "http://", "http:///x", "http://a b/", "http://exa\\mple.com/", "http://[::1/", "http://[fe80::1%25eth0]/",
        "http://host:0/", "http://host:99999/", "http://host:12ab/", "http://1.2.3.256/", "http://1e3/",
        "http://a..b/", "http://a%2eb/", "//ads.example.com/", "ads.example.com",
    ])
    func malformedURLsAreInvalid(url: String) {
        #expect(refusal(.localDevelopment, url, .notice)?.code == .invalidURL)
    }

    @Test func theNetworksOwnOriginIsTrustedAndNothingElse() {
        let policy = DestinationPolicy.strict.trusting("http://127.0.0.1:8080/openrtb")
        #expect(policy.allows("http://127.0.0.1:8080/win", as: .notice))
        #expect(refusal(policy, "http://127.0.0.1:8081/admin", .notice)?.code == .loopback)
        #expect(refusal(policy, "https://127.0.0.1:8080/win", .notice)?.code == .loopback)
    }

    @Test func aNetworkAtALoopbackBaseURLGetsTheLocalPolicyAndAnyOtherTheStrictOne() {
        let local = DestinationPolicy.forNetwork(baseURL: "http://127.0.0.1:4000/sandbox")
        #expect(local.allowsHTTP && local.allowsLoopback && !local.allowsPrivateNetworks)
        let production = DestinationPolicy.forNetwork(baseURL: "https://bidder.example.com/")
        #expect(!production.allowsHTTP && !production.allowsLoopback)
        #expect(production.trustedOrigins == ["https://bidder.example.com:443"])
        let explicit = DestinationPolicy.forNetwork(baseURL: "http://127.0.0.1:4000/", explicit: .strict)
        #expect(!explicit.allowsLoopback && explicit.trustedOrigins == ["http://127.0.0.1:4000"])
    }

    @Test func aRefusalNamesTheHostButNeverThePathOrQuery() {
        let message = refusal(.strict, "http://127.0.0.1:9/admin?token=secret123", .notice)?.message ?? ""
        #expect(message.contains("127.0.0.1"))
        #expect(!message.contains("secret123") && !message.contains("/admin"))
    }

    @Test func classifyReadsBareHosts() {
        #expect(URLDestination.classify(host: "::1") == .loopback)
        #expect(URLDestination.classify(host: "[::1]") == .loopback)
        #expect(URLDestination.classify(host: "127.0.0.1") == .loopback)
        #expect(URLDestination.classify(host: "127.example") == .public)
        #expect(URLDestination.classify(host: "a b") == nil)
    }

    private func refusal(_ policy: DestinationPolicy, _ url: String, _ kind: OutsideURLKind) -> DestinationRefusal? {
        do throws(DestinationRefusal) {
            try policy.check(url, as: kind)
            return nil
        } catch {
            return error
        }
    }
}

/// Issue 45, destinations: hosts are judged the way the HTTP stacks will resolve them.
@Suite("Destination policy: look-alike and translated hosts")
struct LookAlikeHostTests {
    /// Full-width and other IDNA-mapped spellings were classed public while the HTTP stacks map them to loopback
    /// (UTS #46): `ｌｏｃａｌｈｏｓｔ`, `１２７．０．０．１`, `０．０．０．０`, circled digits. A host in Unicode form is refused
    /// outright, whatever it maps to; its ASCII (`xn--`) form is judged as any name.
    @Test(arguments: [
        "http://ｌｏｃａｌｈｏｓｔ/", "http://１２７．０．０．１:8080/", "http://０．０．０．０/", "http://①②⑦.0.0.1/",
        "https://bücher.example/", "https://ads.example\u{3002}com/",
    ])
    func aHostInUnicodeFormIsRefused(url: String) {
        do throws(DestinationRefusal) {
            let parsed = try URLDestination(parsing: url)
            Issue.record("parsed as \(parsed.host), \(parsed.destinationClass)")
        } catch {
            #expect(error.code == .invalidURL)
        }
        #expect(!DestinationPolicy.localDevelopment.allows(url, as: .tracking))
    }

    @Test func anInternationalNameInItsASCIIFormIsAName() throws {
        let destination = try URLDestination(parsing: "https://xn--bcher-kva.example/x")
        #expect(destination.destinationClass == .public && destination.host == "xn--bcher-kva.example")
    }

    /// NAT64 (RFC 6052, RFC 8215) and 6to4 (RFC 3056) addresses carrying a loopback or link-local IPv4 were classed
    /// public; a router delivers them to the IPv4 they carry.
    @Test(arguments: [
        ("[64:ff9b::127.0.0.1]", DestinationClass.loopback), ("[64:ff9b::7f00:1]", .loopback),
        ("[64:ff9b::a9fe:a9fe]", .linkLocal), ("[64:ff9b:1::a00:1]", .private), ("[2002:7f00:1::]", .loopback),
        ("[2002:a9fe:a9fe::1]", .linkLocal), ("[2002:c0a8:1::1]", .private), ("[64:ff9b::808:808]", .public),
        ("[2002:808:808::1]", .public),
    ])
    func aTranslatedIPv6AddressIsClassedAsTheIPv4ItCarries(host: String, expected: DestinationClass) throws {
        #expect(try URLDestination(parsing: "https://\(host)/").destinationClass == expected)
    }

    @Test func theStrictPolicyRefusesATranslatedLoopbackAddress() {
        #expect(!DestinationPolicy.strict.allows("https://[64:ff9b::127.0.0.1]/track", as: .tracking))
        #expect(!DestinationPolicy.strict.allows("https://[2002:a9fe:a9fe::]/latest", as: .asset))
    }
}

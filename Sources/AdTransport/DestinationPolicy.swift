import CoreMetrics
import Logging

/// Why a URL was refused: a code and a message naming the host (never the path or query, which may carry ids).
public struct DestinationRefusal: Error, Hashable, Sendable, CustomStringConvertible {
    /// Why. An open set (a struct, not an enum): a new code is not a breaking change, so a `switch` over
    /// codes ends with `default`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code as logs and reports spell it (`insecure_http`).
        public let rawValue: String
        private init(_ rawValue: String) { self.rawValue = rawValue }
        /// ``rawValue``.
        public var description: String { rawValue }

        /// Not an absolute http(s) URL with a valid host and port.
        public static let invalidURL = Code("invalid_url")
        /// A scheme other than `https` (or `http`): `javascript:`, `file:`, `data:`, …
        public static let scheme = Code("scheme")
        /// Plain `http` where the policy allows only `https`.
        public static let insecureHTTP = Code("insecure_http")
        /// A loopback host where the policy does not allow loopback.
        public static let loopback = Code("loopback")
        /// A private or link-local address where the policy does not allow them.
        public static let privateNetwork = Code("private_network")
        /// `0.0.0.0`, `::`, multicast, broadcast or another reserved address: never allowed.
        public static let reservedAddress = Code("reserved_address")
        /// An IP address in an odd form (`2130706433`, `0x7f.1`, `[::ffff:127.0.0.1]`): never allowed.
        public static let oddAddressForm = Code("odd_address_form")
        /// A user name or password in the URL: never allowed.
        public static let credentialsInURL = Code("credentials_in_url")
        /// A redirect from a public host to a loopback, private or link-local one.
        public static let redirectInward = Code("redirect_inward")
    }

    /// Why.
    public var code: Code
    /// A human sentence.
    public var message: String

    /// Creates a refusal.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// `"loopback: …"`.
    public var description: String { "\(code.rawValue): \(message)" }

    static func printable(_ text: String) -> String {
        String(text.unicodeScalars.prefix(60).map { $0.value < 0x20 || $0.value >= 0x7F ? "?" : Character($0) })
    }
}

/// The kind of a URL that came from outside (an ad answer), for messages, counters and the table in
/// docs/RELIABILITY.md.
public enum OutsideURLKind: String, Sendable, Hashable, CaseIterable {
    /// Win, billing and loss notices (OpenRTB `nurl`, `burl`, `lurl`).
    case notice
    /// Impression and click tracking fired by the SDK.
    case tracking
    /// MARS callbacks (impression, click, report).
    case callback
    /// The landing page handed to the app, opened when the user taps.
    case click
    /// A creative's image or media, fetched by the SDK or the app.
    case asset
    /// A request to the network's own API (its configured base URL's origin, which its policy trusts).
    case api
}

/// The one rule for every URL that comes from outside (ad answers): `https` to public hosts by default; `http`,
/// loopback and private networks only when allowed; never another scheme, a user name in the URL, an odd address
/// form (`2130706433`) or a reserved address (`0.0.0.0`). The origins in ``trustedOrigins`` (a network's configured
/// base URL) are always allowed: the app chose them.
///
/// Names are judged by their text: `127.attacker.invalid` is a name (public), not loopback.
public struct DestinationPolicy: Sendable, Hashable {
    /// Allow plain `http`. Default false.
    public var allowsHTTP: Bool
    /// Allow loopback hosts (`localhost`, `127/8`, `::1`). Default false.
    public var allowsLoopback: Bool
    /// Allow private and link-local addresses. Default false.
    public var allowsPrivateNetworks: Bool
    /// Origins (`scheme://host:port`, see ``URLDestination/origin``) allowed whatever the flags say.
    public var trustedOrigins: Set<String>

    /// Creates a policy; the defaults are ``strict``.
    public init(
        allowsHTTP: Bool = false, allowsLoopback: Bool = false, allowsPrivateNetworks: Bool = false,
        trustedOrigins: Set<String> = []
    ) {
        self.allowsHTTP = allowsHTTP
        self.allowsLoopback = allowsLoopback
        self.allowsPrivateNetworks = allowsPrivateNetworks
        self.trustedOrigins = trustedOrigins
    }

    /// `https` to public hosts only.
    public static let strict = DestinationPolicy()
    /// `http` and loopback allowed too: the demand sandbox and tests, which serve everything on `127.0.0.1`.
    public static let localDevelopment = DestinationPolicy(allowsHTTP: true, allowsLoopback: true)

    /// The policy of a network whose configured base URL is `baseURL`: `explicit` when given, else
    /// ``localDevelopment`` when the base URL itself is loopback (the app pointed the network at a local server),
    /// else ``strict``; the base URL's origin is trusted either way.
    public static func forNetwork(baseURL: String, explicit: DestinationPolicy? = nil) -> DestinationPolicy {
        let base = try? URLDestination(parsing: baseURL)
        var policy = explicit ?? (base?.destinationClass == .loopback ? .localDevelopment : .strict)
        if let base { policy.trustedOrigins.insert(base.origin) }
        return policy
    }

    /// This policy, also trusting the origin of `url` (ignored when it is not an http(s) URL).
    public func trusting(_ url: String) -> DestinationPolicy {
        var policy = self
        if let destination = try? URLDestination(parsing: url) { policy.trustedOrigins.insert(destination.origin) }
        return policy
    }

    /// Checks `url`, a URL of `kind` from outside; returns where it points, or throws why it is refused.
    @discardableResult
    public func check(_ url: String, as kind: OutsideURLKind) throws(DestinationRefusal) -> URLDestination {
        let destination: URLDestination
        do throws(DestinationRefusal) {
            destination = try URLDestination(parsing: url)
        } catch {
            throw DestinationRefusal(error.code, "\(kind.rawValue) URL: \(error.message)")
        }
        try check(destination, as: kind)
        return destination
    }

    /// Checks a parsed destination; see `check(_:as:)` for a URL string.
    public func check(_ destination: URLDestination, as kind: OutsideURLKind) throws(DestinationRefusal) {
        let what = "\(kind.rawValue) URL to \(destination.host)"
        if destination.isOddAddressForm {
            throw .init(.oddAddressForm, "\(what): the address is written in an odd form; only plain forms are allowed")
        }
        switch destination.destinationClass {
        case .unspecified, .reserved:
            let name = destination.destinationClass.rawValue
            throw .init(.reservedAddress, "\(what): a \(name) address is never allowed")
        default: break
        }
        if trustedOrigins.contains(destination.origin) { return }
        switch destination.destinationClass {
        case .loopback where !allowsLoopback:
            throw .init(.loopback, "\(what): loopback is not allowed by the configuration")
        case .private where !allowsPrivateNetworks, .linkLocal where !allowsPrivateNetworks:
            throw .init(.privateNetwork, "\(what): private networks are not allowed by the configuration")
        default: break
        }
        if destination.scheme == "http" && !allowsHTTP {
            throw .init(.insecureHTTP, "\(what): plain http is not allowed by the configuration; use https")
        }
    }

    /// Whether `url` passes `check(_:as:)`.
    public func allows(_ url: String, as kind: OutsideURLKind) -> Bool {
        (try? check(url, as: kind)) != nil
    }

    /// `url` when it passes, else nil after logging the refusal (host and reason, never the query) and counting it
    /// (`admediation_destination_refused` with `network`, `kind` and `code` dimensions). For optional URLs: the ad
    /// stays usable without it.
    public func optional(_ url: String?, as kind: OutsideURLKind, network: String) -> String? {
        guard let url else { return nil }
        do throws(DestinationRefusal) {
            try check(url, as: kind)
            return url
        } catch {
            Self.record(error, kind: kind, network: network)
            return nil
        }
    }

    /// Checks each present URL an ad cannot do without (its tracking, its creative); the first refused one is logged,
    /// counted (see ``optional(_:as:network:)``) and thrown: the ad is then not served.
    public func required(_ urls: [(url: String?, kind: OutsideURLKind)], network: String) throws(DestinationRefusal) {
        for (url, kind) in urls {
            guard let url else { continue }
            do throws(DestinationRefusal) {
                try check(url, as: kind)
            } catch {
                Self.record(error, kind: kind, network: network)
                throw error
            }
        }
    }

    /// Logs and counts a refusal (see ``optional(_:as:network:)``).
    public static func record(_ refusal: DestinationRefusal, kind: OutsideURLKind, network: String) {
        logger.notice(
            "outside URL refused",
            metadata: [
                "network": "\(network)", "kind": "\(kind.rawValue)", "code": "\(refusal.code.rawValue)",
                "reason": "\(refusal.message)",
            ])
        Counter(
            label: "admediation_destination_refused",
            dimensions: [("network", network), ("kind", kind.rawValue), ("code", refusal.code.rawValue)]
        ).increment()
    }

    private static let logger = Logger(label: "admediation.destinations")
}

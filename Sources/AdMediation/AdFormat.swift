/// A banner's size in points.
public struct BannerSize: Hashable, Sendable, Codable, CustomStringConvertible {
    /// Width in points.
    public var width: Int
    /// Height in points.
    public var height: Int

    /// Creates a size.
    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    /// 320×50, the standard phone banner.
    public static let standard = BannerSize(width: 320, height: 50)
    /// 300×250, the medium rectangle.
    public static let medium = BannerSize(width: 300, height: 250)
    /// 728×90, the tablet leaderboard.
    public static let leaderboard = BannerSize(width: 728, height: 90)

    /// `"320x50"`.
    public var description: String { "\(width)x\(height)" }

    /// Parses `"320x50"` or a named size (`standard`, `medium`, `leaderboard`).
    public init?(parsing text: String) {
        switch text.lowercased() {
        case "standard": self = .standard
        case "medium": self = .medium
        case "leaderboard": self = .leaderboard
        default:
            let parts = text.lowercased().split(separator: "x")
            guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]), w > 0, h > 0 else { return nil }
            self.init(width: w, height: h)
        }
    }
}

/// The kind of ad a placement shows: a banner of a size, or a format that has no size.
///
/// The set of formats is open: the general ones are static members here (``interstitial``, ``rewarded``,
/// ``appOpen``, ``native``), and a network module declares its own the same way (MARS's `tile`, `spoc` and `image`
/// are `AdFormat.Kind` and `AdFormat` extensions in `MARSAds`). A new format is a new ``Kind``, never a new case, so
/// it breaks no `switch`: match a sizeless format as `case .interstitial:` (an equality match) with a `default`.
public enum AdFormat: Hashable, Sendable, CustomStringConvertible {
    /// An inline banner of a fixed size.
    case banner(BannerSize)
    /// A format without a size, named by its kind. `.unsized(.banner)` is a banner without a size, which no network
    /// can serve: a placement's validation refuses it.
    case unsized(Kind)

    /// A full-screen ad the user can close.
    public static let interstitial = AdFormat.unsized(.interstitial)
    /// A full-screen ad that grants a reward once watched.
    public static let rewarded = AdFormat.unsized(.rewarded)
    /// A full-screen ad shown when the app comes to the foreground.
    public static let appOpen = AdFormat.unsized(.appOpen)
    /// A native ad whose fields the app lays out itself.
    public static let native = AdFormat.unsized(.native)

    /// A format without its banner size: what a network serves (``AdNetworkCapabilities/formats``) and what a
    /// configuration names. An open set: the core declares the general kinds (``builtIn``), a network module its
    /// own (`static let` in an extension). The raw value is the wire and configuration name.
    public struct Kind: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
        // Codable as the name alone: the standard library's coding of a `String`-backed `RawRepresentable`.
        /// The wire and configuration name (`banner`, `app_open`, …).
        public let rawValue: String

        /// The kind named `rawValue`. Whether any network serves it is the configuration's check, not this one's.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// Banners of any size.
        public static let banner = Kind(rawValue: "banner")
        /// Interstitials.
        public static let interstitial = Kind(rawValue: "interstitial")
        /// Rewarded ads.
        public static let rewarded = Kind(rawValue: "rewarded")
        /// App-open ads.
        public static let appOpen = Kind(rawValue: "app_open")
        /// Native ads.
        public static let native = Kind(rawValue: "native")

        /// The kinds the core declares, in this order; a network module's kinds are its factory's `formats`.
        public static let builtIn: [Kind] = [.banner, .interstitial, .rewarded, .appOpen, .native]

        /// The name.
        public var description: String { rawValue }
    }

    /// The format without its size.
    public var kind: Kind {
        switch self {
        case .banner: .banner
        case .unsized(let kind): kind
        }
    }

    /// The wire and configuration name (`banner`, `interstitial`, `rewarded`, `app_open`, `native`, or a network's
    /// own such as MARS's `tile`).
    public var name: String { kind.rawValue }

    /// The format's name, with the size for banners (`banner(320x50)`).
    public var description: String {
        if case .banner(let size) = self { return "banner(\(size))" }
        return name
    }

    /// The format named `name`; banners need a `size` (ignored for any other format). `appOpen` is read as
    /// `app_open`. Returns nil for an empty name or a banner without size; any other name is a format of that kind
    /// (the set is open: a configuration file checks names against the kinds its networks declare).
    public init?(name: String, size: BannerSize? = nil) {
        switch name {
        case "":
            return nil
        case Kind.banner.rawValue:
            guard let size else { return nil }
            self = .banner(size)
        case "appOpen":
            self = .appOpen
        default:
            self = .unsized(Kind(rawValue: name))
        }
    }
}

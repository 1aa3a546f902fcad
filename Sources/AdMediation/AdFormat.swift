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

/// The kind of ad a placement shows.
public enum AdFormat: Hashable, Sendable, CustomStringConvertible {
    /// An inline banner of a fixed size.
    case banner(BannerSize)
    /// A full-screen ad the user can close.
    case interstitial
    /// A full-screen ad that grants a reward once watched.
    case rewarded
    /// A full-screen ad shown when the app comes to the foreground.
    case appOpen
    /// A small native tile (MARS-style).
    case tile
    /// A sponsored story in a feed (MARS-style).
    case spoc
    /// A display image such as a billboard (MARS-style).
    case image
    /// A native ad whose fields the app lays out itself.
    case native

    /// A format without its banner size: what a network serves (``AdNetworkCapabilities/formats``) and what a
    /// configuration names. The raw value is the wire and configuration name.
    public enum Kind: String, CaseIterable, Hashable, Sendable, Codable {
        /// Banners of any size.
        case banner
        /// Interstitials.
        case interstitial
        /// Rewarded ads.
        case rewarded
        /// App-open ads.
        case appOpen = "app_open"
        /// Native tiles.
        case tile
        /// Sponsored stories.
        case spoc
        /// Display images.
        case image
        /// Native ads.
        case native
    }

    /// The format without its size.
    public var kind: Kind {
        switch self {
        case .banner: .banner
        case .interstitial: .interstitial
        case .rewarded: .rewarded
        case .appOpen: .appOpen
        case .tile: .tile
        case .spoc: .spoc
        case .image: .image
        case .native: .native
        }
    }

    /// The wire and configuration name (`banner`, `interstitial`, `rewarded`, `app_open`, `tile`, `spoc`,
    /// `image`, `native`).
    public var name: String { kind.rawValue }

    /// The format's name, with the size for banners (`banner(320x50)`).
    public var description: String {
        if case .banner(let size) = self { return "banner(\(size))" }
        return name
    }

    /// The format named `name`; banners need a `size`. Returns nil for an unknown name or a banner without size.
    public init?(name: String, size: BannerSize? = nil) {
        switch name {
        case "banner":
            guard let size else { return nil }
            self = .banner(size)
        case "interstitial": self = .interstitial
        case "rewarded": self = .rewarded
        case "app_open", "appOpen": self = .appOpen
        case "tile": self = .tile
        case "spoc": self = .spoc
        case "image": self = .image
        case "native": self = .native
        default: return nil
        }
    }

    /// All format names accepted by ``init(name:size:)``.
    public static let allNames = Kind.allCases.map(\.rawValue)
}

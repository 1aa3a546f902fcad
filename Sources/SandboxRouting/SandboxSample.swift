/// A line a module's network fills in a sandbox with no scenario, as a configuration file names it: the network's
/// fixture in the registry of built-in networks, read by the fault matrix, the fuzzers and `mediate --demo`
/// (``SandboxRouteModule/sample``).
public struct SandboxSample: Sendable, Hashable {
    /// The network's settings for this sandbox, beside `type` and `base_url` (`["app_id": "cb_app_demo"]`): string
    /// values, as a configuration file may write every setting.
    public var settings: [String: String]
    /// What follows the module's base URL in the network's `base_url` (MARS: `/v1/`); empty by default.
    public var path: String
    /// The placement's format as a configuration file names it (`interstitial`, `tile`, `banner`).
    public var format: String
    /// A banner's size (`320x50`); nil for other formats.
    public var size: String?
    /// A placement of the network that fills.
    public var placement: String

    /// Creates a sample.
    public init(
        settings: [String: String] = [:], path: String = "", format: String, size: String? = nil, placement: String
    ) {
        self.settings = settings
        self.path = path
        self.format = format
        self.size = size
        self.placement = placement
    }
}

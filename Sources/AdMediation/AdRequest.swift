/// One request for an ad.
public struct AdRequest: Hashable, Sendable {
    /// The placement to fill. For a network, its own placement id; for a ``Mediator``, the mediated placement.
    public var placement: String
    /// The format wanted.
    public var format: AdFormat
    /// The app's id for the user, if any. The privacy rules may keep it from ad requests and events (a mediator
    /// removes it where user ids are not allowed); a reward's validation uses ``rewardUserID``.
    public var userID: String?
    /// The app's own account id for validating a reward this user earns, when it differs from ``userID`` (nil:
    /// ``userID`` as the app gave it). Not a tracking identifier: it goes only to the network that served the rewarded
    /// ad, in that ad's reward validation — the call the user's own request for the reward makes — whatever the
    /// privacy rules decide for ``userID`` (the privacy article, "Rewards").
    public var rewardUserID: String? = nil
    /// The app's session id, if any.
    public var sessionID: String?
    /// The device's advertising id (IDFA, GAID), when the app passes one (nil: none, or the network's own
    /// configuration's). Sent only by networks whose contract carries one (OpenRTB `device.ifa`), and only where the
    /// privacy rules allow device ids: the privacy gate removes it where they do not.
    public var advertisingID: String? = nil
    /// Privacy signals; adapters forward them to the wire.
    public var privacy: PrivacySignals
    /// Ask the network for test ads.
    public var testMode: Bool
    /// How long the whole load may take, or `nil` for the network's own default.
    public var timeout: Duration?
    /// The lowest price (CPM, US dollars) worth showing, when the caller has one: a bidder sends it as `bidfloor`; a
    /// mediator sets it from the line's or bidder's `floor_ecpm`. Default: none.
    public var floorEcpm: Double? = nil
    /// How the auction this request takes part in clears, when a ``Mediator`` runs one: set for its bidders from the
    /// placement's `auction`, and announced by a bidder (OpenRTB `at`). Default: none (the bidder's own setting).
    public var auction: AuctionType? = nil
    /// What the loss notices of this request's auction may tell a losing bidder: a ``Mediator`` sets the stricter of
    /// the caller's setting and its placement's ``PlacementConfiguration/lossNotices`` on every line, and a bidder
    /// leaves the price of its loss notices empty under ``LossNoticeContent/reasonOnly``. Default: reason and price.
    public var lossNotices: LossNoticeContent = .reasonAndPrice

    /// Creates a request.
    public init(
        placement: String,
        format: AdFormat,
        userID: String? = nil,
        sessionID: String? = nil,
        privacy: PrivacySignals = PrivacySignals(),
        testMode: Bool = false,
        timeout: Duration? = nil
    ) {
        self.placement = placement
        self.format = format
        self.userID = userID
        self.sessionID = sessionID
        self.privacy = privacy
        self.testMode = testMode
        self.timeout = timeout
    }
}

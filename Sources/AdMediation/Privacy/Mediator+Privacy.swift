import AdPrivacy
import Logging

/// How a ``Mediator`` reads and enforces consent.
public struct PrivacyConfiguration: Sendable {
    /// Where the CMP keeps the user's choices, read on every request: a signal the request leaves unset is taken
    /// from it (``PrivacySignals/filling(from:)``). Default: none.
    public var consentStore: (any ConsentStore)? = nil
    /// TCF vendor ids by network id, for networks whose ``AdNetworkCapabilities/tcfVendorID`` is not declared (or
    /// to override it). Default: none.
    public var tcfVendorIDs: [String: Int] = [:]
    /// Where malformed stored values are reported (warnings, each malformed value once until the stored value
    /// changes). Default `admediation.privacy`.
    public var logger = Logger(label: "admediation.privacy")
    /// The malformed stored values already reported, shared by the copies of this configuration (one mediator's).
    let warnings = ConsentWarningMemory()

    /// Creates a configuration; everything defaults to "none".
    public init(consentStore: (any ConsentStore)? = nil, tcfVendorIDs: [String: Int] = [:]) {
        self.consentStore = consentStore
        self.tcfVendorIDs = tcfVendorIDs
    }
}

extension PrivacyConfiguration {
    /// `request` with the signals it leaves unset read from the consent store, if there is one.
    package func withStoredConsent(_ request: AdRequest) -> AdRequest {
        guard let consentStore else { return request }
        var request = request
        request.privacy = request.privacy.filling(
            from: PrivacySignals(store: consentStore, logger: logger, memory: warnings))
        return request
    }

    /// The TCF vendor id of network `id`: this configuration's, else `declared` (the network's own
    /// ``AdNetworkCapabilities/tcfVendorID``).
    public func tcfVendorID(of id: String, declared: Int?) -> Int? {
        tcfVendorIDs[id] ?? declared
    }

    /// The one privacy gate every path to an adapter goes through (``PrivacyGatedNetwork`` for a network asked alone;
    /// the ``Mediator``'s lines and bidders take the same verdict, with the vendor id resolved once in their plan, and
    /// the same ``restrict(_:to:)``): the rules' verdict for network `id` (declaring `declared`) under the request's
    /// decoded signals. When the network may be asked, `request` is restricted to what the verdict
    /// allows (``PrivacySignals/permissions`` set, no advertising id where device ids are not allowed, no user id where
    /// user ids are not allowed — a reward's validation
    /// keeps the app's account id, ``AdRequest/rewardUserID``); when it may not, `request` is left as it was and must
    /// not be sent.
    package func gate(
        _ request: inout AdRequest, decoded: DecodedPrivacy, network id: String, declared: Int?
    ) -> PrivacyVerdict {
        let verdict = PrivacyRules.verdict(decoded, tcfVendorID: tcfVendorID(of: id, declared: declared))
        if verdict.mayBeAsked { Self.restrict(&request, to: verdict) }
        return verdict
    }

    /// Restricts `request` to what `verdict` (one that lets the network be asked) allows.
    static func restrict(_ request: inout AdRequest, to verdict: PrivacyVerdict) {
        if request.privacy.permissions != verdict.permissions { request.privacy.permissions = verdict.permissions }
        if !verdict.permissions.deviceIDs { request.advertisingID = nil }
        if !verdict.permissions.userIDs {
            if request.rewardUserID == nil { request.rewardUserID = request.userID }
            request.userID = nil
        }
    }
}

extension Mediator {
    /// `request` with the signals it leaves unset read from the consent store, if there is one.
    func withStoredConsent(_ request: AdRequest) -> AdRequest {
        privacy.withStoredConsent(request)
    }

    /// The privacy rules' verdict for network `id` under the request's decoded signals.
    func privacyVerdict(_ decoded: DecodedPrivacy, network id: String) -> PrivacyVerdict {
        PrivacyRules.verdict(
            decoded, tcfVendorID: privacy.tcfVendorID(of: id, declared: networks[id]?.capabilities.tcfVendorID))
    }

    /// `trace` with the privacy rules' reasons: on every line and bid they blocked, why (the engine keeps only the
    /// skip); on every other, what they restricted. Nothing to do for a request without privacy signals.
    func annotatePrivacy(_ trace: MediationTrace, signals: PrivacySignals) -> MediationTrace {
        guard signals != PrivacySignals() else { return trace }
        let blocked = LineOutcome.skipped(.privacyBlocked)
        let decoded = DecodedPrivacy(signals)
        var trace = trace
        for index in trace.lines.indices {
            let verdict = privacyVerdict(decoded, network: trace.lines[index].network)
            if trace.lines[index].outcome == blocked {
                trace.lines[index].privacyReason = verdict.blockedReason
            } else {
                trace.lines[index].privacyRestrictions = verdict.reasons
            }
        }
        for index in trace.bids.indices {
            let verdict = privacyVerdict(decoded, network: trace.bids[index].network)
            if trace.bids[index].outcome == blocked {
                trace.bids[index].privacyReason = verdict.blockedReason
            } else {
                trace.bids[index].privacyRestrictions = verdict.reasons
            }
        }
        return trace
    }
}

/// A network behind the privacy gate a ``Mediator`` applies to its lines, for every path that asks one network alone
/// (an app or example loading from one adapter, `mediate load --network`, `compare`'s per-network rows,
/// `conformance`): the stored consent is read on each load, a network the rules block is never called — the load
/// throws an ``AdError`` of code `privacy_blocked` with the rules' reason as its message — and one they let through
/// receives the request restricted as a ``Mediator``'s line would (no user id, advertising id or personalisation
/// where the rules forbid them).
///
/// ```swift
/// let privacy = PrivacyConfiguration(consentStore: UserDefaultsConsentStore(), tcfVendorIDs: ["bidder": 755])
/// let network = PrivacyGatedNetwork(BiddingNetwork(configuration: bidder, http: http), configuration: privacy)
/// ```
public struct PrivacyGatedNetwork: AdNetwork {
    /// The network behind the gate.
    public let network: any AdNetwork
    /// How consent is read (the consent store) and which TCF vendor id the network has.
    package let configuration: PrivacyConfiguration
    /// Signals that win over each request's own (the CLI's privacy options); the request's fill in what they leave
    /// unset. Nil: the request's alone.
    package let signals: PrivacySignals?

    /// `network` behind the gate of `configuration` (its consent store and TCF vendor ids).
    public init(_ network: any AdNetwork, configuration: PrivacyConfiguration) {
        self.init(network, configuration: configuration, signals: nil)
    }

    /// `network` behind the gate of `configuration`, with `signals` winning over each request's (a tool that states the
    /// user's choices on its command line, a server that decides for each request).
    public init(_ network: any AdNetwork, configuration: PrivacyConfiguration, signals: PrivacySignals?) {
        self.network = network
        self.configuration = configuration
        self.signals = signals
    }

    /// The network's id.
    public var id: String { network.id }
    /// The network's capabilities.
    public var capabilities: AdNetworkCapabilities { network.capabilities }

    /// Loads from the network when the rules let it be asked; throws an ``AdError`` of code `privacy_blocked`
    /// otherwise.
    public func load(_ request: AdRequest) async throws -> AdLoadResult {
        var request = request
        let verdict = gate(&request)
        if let reason = verdict.blockedReason { throw AdError(.privacyBlocked, reason) }
        return try await network.load(request)
    }

    /// The gate's verdict for `request` (with the stored consent and the gate's fixed signals applied), and the
    /// request as the network would receive it when the verdict lets it be asked.
    public func gate(_ request: inout AdRequest) -> PrivacyVerdict {
        request = configuration.withStoredConsent(request)
        if let signals { request.privacy = signals.filling(from: request.privacy) }
        return configuration.gate(
            &request, decoded: DecodedPrivacy(request.privacy), network: network.id,
            declared: network.capabilities.tcfVendorID)
    }
}

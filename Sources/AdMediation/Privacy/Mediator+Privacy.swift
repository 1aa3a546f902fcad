import Logging

/// How a ``Mediator`` reads and enforces consent.
public struct PrivacyConfiguration: Sendable {
    /// Where the CMP keeps the user's choices, read on every request: a signal the request leaves unset is taken
    /// from it (``PrivacySignals/filling(from:)``). Default: none.
    public var consentStore: (any ConsentStore)? = nil
    /// TCF vendor ids by network id, for networks whose ``AdNetworkCapabilities/tcfVendorID`` is not declared (or
    /// to override it). Default: none.
    public var tcfVendorIDs: [String: Int] = [:]
    /// Where malformed stored values are reported (warnings). Default `admediation.privacy`.
    public var logger = Logger(label: "admediation.privacy")

    /// Creates a configuration; everything defaults to "none".
    public init(consentStore: (any ConsentStore)? = nil, tcfVendorIDs: [String: Int] = [:]) {
        self.consentStore = consentStore
        self.tcfVendorIDs = tcfVendorIDs
    }
}

extension Mediator {
    /// `request` with the signals it leaves unset read from the consent store, if there is one.
    func withStoredConsent(_ request: AdRequest) -> AdRequest {
        guard let store = privacy.consentStore else { return request }
        var request = request
        request.privacy = request.privacy.filling(from: PrivacySignals(store: store, logger: privacy.logger))
        return request
    }

    /// The TCF vendor id of network `id`: the configuration's, else the network's own declaration.
    func tcfVendorID(of id: String) -> Int? {
        privacy.tcfVendorIDs[id] ?? networks[id]?.capabilities.tcfVendorID
    }

    /// The privacy rules' verdict for network `id` under the request's decoded signals.
    func privacyVerdict(_ decoded: DecodedPrivacy, network id: String) -> PrivacyVerdict {
        PrivacyRules.verdict(decoded, tcfVendorID: tcfVendorID(of: id))
    }

    /// What a network the rules let through receives: the decided permissions (which its adapter applies) and no
    /// user id when user ids are not allowed — except for a reward's validation, which keeps the app's account id
    /// (``AdRequest/rewardUserID``).
    static func restrict(_ request: inout AdRequest, by verdict: PrivacyVerdict) {
        request.privacy.permissions = verdict.permissions
        if !verdict.permissions.userIDs {
            if request.rewardUserID == nil { request.rewardUserID = request.userID }
            request.userID = nil
        }
    }

    /// `trace` with the reason on every line and bid the privacy rules blocked (the engine keeps only the skip).
    func annotatePrivacy(_ trace: MediationTrace, signals: PrivacySignals) -> MediationTrace {
        let blocked = SkipReason.privacyBlocked
        let isBlocked = { (outcome: LineOutcome) in outcome == .skipped(blocked) }
        guard
            trace.lines.contains(where: { isBlocked($0.outcome) })
                || trace.bids.contains(where: { isBlocked($0.outcome) })
        else { return trace }
        let decoded = DecodedPrivacy(signals)
        var trace = trace
        for index in trace.lines.indices where isBlocked(trace.lines[index].outcome) {
            trace.lines[index].privacyReason =
                privacyVerdict(decoded, network: trace.lines[index].network).blockedReason
        }
        for index in trace.bids.indices where isBlocked(trace.bids[index].outcome) {
            trace.bids[index].privacyReason = privacyVerdict(decoded, network: trace.bids[index].network).blockedReason
        }
        return trace
    }
}

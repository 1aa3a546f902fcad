import AdMediation
import AdTransport
import Foundation

/// A conformance scenario's failure: which scenario, what was expected, what happened.
public struct ConformanceFailure: Error, Hashable, Sendable, CustomStringConvertible {
    /// The scenario's name.
    public var scenario: String
    /// What the rule requires.
    public var expectation: String
    /// What the network did.
    public var observed: String

    /// Creates a failure.
    public init(scenario: String, expectation: String, observed: String) {
        self.scenario = scenario
        self.expectation = expectation
        self.observed = observed
    }

    /// `"privacySignalsReachTheWire: expected …; observed …"`.
    public var description: String { "\(scenario): expected \(expectation); observed \(observed)" }
}

/// The network under test and the requests that exercise it.
public struct ConformanceSubject: Sendable {
    /// The network under test.
    public var network: any AdNetwork
    /// What reached the network's wire (a ``RecordingHTTPClient`` the adapter sends through, or the network itself).
    public var wire: any WireProbe
    /// A request the network fills.
    public var fillRequest: AdRequest
    /// A request the network answers with no fill, if one is known.
    public var noFillRequest: AdRequest?
    /// A request the network fails, and the error code it must fail with, if one is known.
    public var failingRequest: (request: AdRequest, code: AdError.Code)?
    /// A request that takes at least one second to answer (for cancellation and timeout scenarios), if known.
    public var slowRequest: AdRequest?
    /// The privacy fields the network's contract carries (default: TCF, US privacy and GPP strings).
    public var privacyFields: Set<PrivacyField>
    /// How long to watch for work that continues after a call returned. Default 150 ms.
    public var quietPeriod: Duration
    /// The subject's loads go through a mediator, which settles the auction of the ad it returns (a bidder's win
    /// notice is then on the wire right after the load): the event scenarios let that pass before they watch.
    var settlesOnLoad = false

    /// A privacy field a contract may carry.
    public enum PrivacyField: String, Sendable, Hashable, CaseIterable {
        /// The TCF consent string.
        case tcfConsent = "tcf"
        /// The US privacy string.
        case usPrivacy = "us_privacy"
        /// The GPP string.
        case gpp
    }

    /// Describes a subject.
    public init(
        network: any AdNetwork,
        wire: any WireProbe,
        fillRequest: AdRequest,
        noFillRequest: AdRequest? = nil,
        failingRequest: (request: AdRequest, code: AdError.Code)? = nil,
        slowRequest: AdRequest? = nil,
        privacyFields: Set<PrivacyField> = [.tcfConsent, .usPrivacy, .gpp],
        quietPeriod: Duration = .milliseconds(150)
    ) {
        self.network = network
        self.wire = wire
        self.fillRequest = fillRequest
        self.noFillRequest = noFillRequest
        self.failingRequest = failingRequest
        self.slowRequest = slowRequest
        self.privacyFields = privacyFields
        self.quietPeriod = quietPeriod
    }
}

/// How an ad reaches the app in a scenario: the network's own load, through a `Mediator` whose only line is the
/// network, or through a `Mediator` that is the only line of another.
public enum ConformancePath: String, Sendable, Hashable, CaseIterable {
    /// The network's own ad.
    case bare
    /// Through a `Mediator`.
    case mediated
    /// Through a `Mediator` nested in another.
    case nested

    /// A `Mediator` over `network` whose placement `conformance` is `placement`, and for `.nested` that mediator as
    /// the only line of another (10 s line timeout and deadline), both on `clock`.
    static func mediator(
        _ path: ConformancePath, over network: any AdNetwork, placement: PlacementConfiguration, clock: any AdClock
    ) throws -> Mediator {
        let inner = try Mediator(
            id: "conformance-mediator", networks: [network],
            configuration: MediationConfiguration(placements: ["conformance": placement]), clock: clock)
        guard path == .nested else { return inner }
        let outer = PlacementConfiguration(
            format: placement.format,
            lines: [WaterfallLine(network: inner.id, placement: "conformance", timeout: .seconds(10))],
            deadline: .seconds(10))
        return try Mediator(
            id: "conformance-outer", networks: [inner],
            configuration: MediationConfiguration(placements: ["conformance": outer]), clock: clock)
    }
}

extension ConformanceSubject {
    /// The same subject with every load going by `path`: the fill request becomes a mediated placement (id
    /// `conformance`, the fill request's format) whose only line is the network at the fill request's placement (10 s
    /// line timeout and deadline, so the kit, not the mediator, judges time). Only the fill request is kept: the
    /// other requests' rules are the network's own. Throws the mediator's configuration error.
    public func through(_ path: ConformancePath) throws -> ConformanceSubject {
        guard path != .bare else { return self }
        let line = WaterfallLine(
            network: network.id, placement: fillRequest.placement, timeout: .seconds(10))
        let placement = PlacementConfiguration(format: fillRequest.format, lines: [line], deadline: .seconds(10))
        let mediator = try ConformancePath.mediator(
            path, over: network, placement: placement, clock: SystemAdClock())
        var request = fillRequest
        request.placement = "conformance"
        var subject = ConformanceSubject(
            network: mediator, wire: wire, fillRequest: request, privacyFields: privacyFields, quietPeriod: quietPeriod)
        subject.settlesOnLoad = true
        return subject
    }
}

/// The result of one scenario in ``AdNetworkConformance/runAll(_:)``.
public struct ConformanceResult: Sendable {
    /// The scenario's name.
    public var scenario: String
    /// Passed, failed, or skipped (the subject lacks the request the scenario needs).
    public var status: Status
    /// The outcome of a scenario.
    public enum Status: Sendable, Hashable {
        /// The rule holds.
        case passed
        /// The rule is broken.
        case failed(ConformanceFailure)
        /// Not run, with the reason.
        case skipped(String)
    }
}

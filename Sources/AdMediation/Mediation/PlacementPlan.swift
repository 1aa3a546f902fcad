import AdPrivacy

/// What a request for one placement (or one arm of it) needs that never changes after the mediator's `init`: the
/// placement as its requests run it, the engine's slots, and per slot the network, its breaker and what its privacy
/// gate needs. Built once, so a request reads one table instead of looking each line's network, breaker and vendor id
/// up by name (and casting it) per line. A class: a request holds its plan by one reference, never copies it.
final class PlacementPlan: Sendable {
    /// Where a slot's load goes. A class: a request's lines hold their route by one reference instead of copying
    /// the network's existential and the verdict per line.
    final class Route: Sendable {
        let network: any AdNetwork
        let breaker: Guarded<CircuitBreaker>?
        /// The TCF vendor id the privacy rules judge the network by (the configuration's, else the network's own).
        let tcfVendorID: Int?
        /// A mediator running as this line is nested: its winner is the outer decision's to settle.
        let isMediator: Bool
        /// The privacy rules' verdict for a request that carries no privacy signal at all (the common case), which
        /// depends on nothing but the vendor id.
        let unsignalledVerdict: PrivacyVerdict

        init(
            network: any AdNetwork, breaker: Guarded<CircuitBreaker>?, tcfVendorID: Int?, isMediator: Bool,
            unsignalledVerdict: PrivacyVerdict
        ) {
            self.network = network
            self.breaker = breaker
            self.tcfVendorID = tcfVendorID
            self.isMediator = isMediator
            self.unsignalledVerdict = unsignalledVerdict
        }
    }

    /// The placement, with its arm applied.
    let placement: PlacementConfiguration
    /// The engine's slots: bidders, then lines in configured order.
    let slots: [DecisionEngine.Slot]
    /// Per slot, its network's route (nil for a network the mediator does not have: the slot is never started).
    let routes: [Route?]
    /// The placement's pacing and frequency cap (one for the placement and all its arms).
    let pacing: Guarded<PlacementPacing>?

    init(
        _ placement: PlacementConfiguration, networks: [String: any AdNetwork],
        breakers: [String: Guarded<CircuitBreaker>], privacy: PrivacyConfiguration, pacing: Guarded<PlacementPacing>?
    ) {
        self.placement = placement
        self.pacing = pacing
        slots = DecisionEngine.slots(of: placement)
        let unsignalled = DecodedPrivacy(PrivacySignals())
        routes = slots.map { slot in
            guard let network = networks[slot.network] else { return nil }
            let vendor = privacy.tcfVendorID(of: slot.network, declared: network.capabilities.tcfVendorID)
            return Route(
                network: network, breaker: breakers[slot.network], tcfVendorID: vendor,
                isMediator: network is Mediator,
                unsignalledVerdict: PrivacyRules.verdict(unsignalled, tcfVendorID: vendor))
        }
    }

    /// Every placement's plan, and one per arm, keyed as the optimizers are (`id`, or `id#label` for an arm).
    static func all(
        of configuration: MediationConfiguration, networks: [String: any AdNetwork],
        breakers: [String: Guarded<CircuitBreaker>], privacy: PrivacyConfiguration,
        pacing: [String: Guarded<PlacementPacing>]
    ) -> [String: PlacementPlan] {
        var plans: [String: PlacementPlan] = [:]
        for (id, placement) in configuration.placements {
            plans[id] = PlacementPlan(
                placement, networks: networks, breakers: breakers, privacy: privacy, pacing: pacing[id])
            for arm in placement.arms {
                plans["\(id)#\(arm.label)"] = PlacementPlan(
                    placement.variant(arm), networks: networks, breakers: breakers, privacy: privacy,
                    pacing: pacing[id])
            }
        }
        return plans
    }
}

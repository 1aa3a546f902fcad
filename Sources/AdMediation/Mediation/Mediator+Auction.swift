/// The A/B arm a request runs (the auction itself is decided by ``DecisionEngine``).
extension Mediator {
    /// The key of the arm a request runs: of its plan and optimizer state (`placement`, or `placement#label` for an
    /// arm). With a user id the choice is sticky: an FNV-1a hash of placement and user picks the arm, so a user sees
    /// one arm.
    static func arm(of placement: PlacementConfiguration, id: String, userID: String?) -> String {
        guard !placement.arms.isEmpty else { return id }
        let total = placement.arms.reduce(0) { $0 + $1.weight }
        var point: Double
        if let userID {
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in "\(id)\u{0}\(userID)".utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
            point = Double(hash >> 11) / Double(UInt64(1) << 53)
        } else {
            point = Double.random(in: 0..<1)
        }
        point *= total
        for arm in placement.arms {
            if point < arm.weight { return "\(id)#\(arm.label)" }
            point -= arm.weight
        }
        let last = placement.arms[placement.arms.count - 1]
        return "\(id)#\(last.label)"
    }
}

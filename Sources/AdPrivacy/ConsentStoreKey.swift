/// The keys of the IAB's in-app storage, as the TCF v2 and GPP specifications name them.
public enum ConsentStoreKey {
    /// `1` when GDPR applies, `0` when not (TCF).
    public static let gdprApplies = "IABTCF_gdprApplies"
    /// The full TC string (TCF).
    public static let tcString = "IABTCF_TCString"
    /// Purpose consents as a string of `0`/`1`, purpose 1 first (TCF).
    public static let purposeConsents = "IABTCF_PurposeConsents"
    /// Vendor consents as a string of `0`/`1`, vendor 1 first (TCF).
    public static let vendorConsents = "IABTCF_VendorConsents"
    /// The CMP's registered id (TCF).
    public static let cmpSdkID = "IABTCF_CmpSdkID"
    /// The TCF policy version (TCF).
    public static let policyVersion = "IABTCF_PolicyVersion"
    /// The full GPP string.
    public static let gppString = "IABGPP_HDR_GppString"
    /// The GPP section ids in force, separated by `_` (`2_6`).
    public static let gppSectionIDs = "IABGPP_GppSID"
    /// The US Privacy (CCPA) string.
    public static let usPrivacy = "IABUSPrivacy_String"

    /// The key of GPP section `id`'s own string (`IABGPP_7_String`).
    public static func gppSection(_ id: Int) -> String { "IABGPP_\(id)_String" }
}
